# Names vulture (https://github.com/jendrikseipp/vulture) reports as unused but that are used
# where it cannot look: by name from outside Python (click, pytest, Jinja templates, JSON
# records, the import system) or by callers of the library. Each group says why. A name
# that is dead belongs deleted, not here. Read by `vulture` through [tool.vulture] in
# pyproject.toml (.ci/run runs it after mypy); vulture only parses this file.
# ruff: noqa
_ = object()

# Module-level __getattr__ / __dir__ (PEP 562): the import system calls them (lazy exports).
__getattr__  # transcript_tools/__init__.py, providers/__init__.py, providers/registry.py
__dir__  # transcript_tools/__init__.py

# Overrides and attributes set for a library that reads them (click, tqdm, sqlite3, Ray Data).
command_class  # cli/help.py: click.Group reads it for its subcommands
_.format_commands  # cli/main.py: click.MultiCommand.format_commands, called by click's help
_.help  # cli/settings.py: FormatOption sets the help click renders
_.monitor_interval  # cli/progress.py: tqdm's monitor thread reads it
_.row_factory  # formats/opencode_db.py: sqlite3.Connection reads it
_.preserve_order  # parallel/ray_data.py: ray.data.DataContext reads it
_.enable_progress_bars  # parallel/ray_data.py: ray.data.DataContext reads it

# pytest plug-in hooks and fixtures' methods (entry point pytest11 in pyproject.toml).
pytest_configure  # pytest_plugin.py: a pytest hook
_.eval  # pytest_plugin.py: the `tsum` fixture's method, called by a user's test

# TypedDict keys: the fields of the JSON records tsum writes (docs/output.md); written by
# building dicts, read by the user's tools, not by attribute.
summarizer_calls  # cost/records.py
summarizer_tokens
cache_break_usd
overflow_calls
overflow_usd
overflow_max_prompt
priced_by
off_chain_usd
replayed_share
delta_usd
delta_usd_same_model
delta_of_bill
max_context_tokens_from  # engine/records.py
turn_tokens
turns_since_last_summary
calls_since_last_summary
recorded_compaction
summary_tokens_assumed
watermark_without_summaries
template_sha256
messages_summarized
messages_dropped
messages_kept
history_messages
view_tokens_estimated
slot_saves
none  # eval/records.py
shown_messages
replaced_messages
compression
next_view_tokens
recall_per_1k_retained_tokens
added_tokens
violation_rules
violation_examples
uncompacted_violations
freed_tokens
span_id  # formats/otel_records.py: a TypedDict of a parsed span
recorded_post_tokens  # fidelity/records.py: FidelityRow.to_json writes every field
cache_only  # providers/factory.py: ProviderOptions, the `**options` of the public api
refresh
no_cache
batch_poll

# Fields read by the Jinja template transcript_tools/templates/report.html.j2.
subtitle  # sweep/html.py
gridlines
_.gridlines
xticks
_.xticks
plot_bottom

# Library API: read by callers of the package (and its tests), not inside it.
read_corpus  # api.py: the package root's exports (its TYPE_CHECKING imports)
sweep_corpus
inspect_corpus
fidelity_corpus
RequestProvider  # providers/base.py: the Protocol a provider with complete_request meets
cache_misses  # providers/executor.py: ExecutorStats, a counter for callers
_.cache_misses

# Counted but not yet read: the cost rule and counters below are kept for the change of the
# engine and sweep that will read or drop them; delete them here when it does.
recorded_calls  # engine/session.py, engine/accounting.py
_.recorded_calls
