"""Presentation shared by every command: aligned text tables (``table``), number formats
(``numbers``) and the SVG charts' axes, ticks and scales (``chart``). Pure: strings and
numbers in, strings out; it imports nothing else of the package."""
