"""The results folder: what a run writes, and the one way to write and read it.

- ``layout``: file names, table columns, the task folder, the default model pair;
- ``files``: the atomic writer every file goes through (report and figures included);
- ``checkpoints``: per-size checkpoints of a task, so a run resumes, each checked against
  the sha256 recorded when it was written;
- ``lock``: one run at a time per task folder;
- ``write``: a finished task's files (its tables and figure made by the caller);
- ``read``: reading a run back (the report, the figures and ``nbvslr compare``).

It reads and writes files only: nothing here computes a statistic or draws.
"""

from nbvslr.results.checkpoints import Checkpoints, Expected, MemoryCheckpoints
from nbvslr.results.files import (
    atomic_write_bytes,
    atomic_write_text,
    csv_gz_bytes,
    json_bytes,
    remove_temp_files,
    write_csv_gz,
    write_json,
)
from nbvslr.results.layout import (
    CHECKPOINTS,
    CURVE_FILE,
    DEFAULT_OUT,
    FLOAT_FORMAT,
    MANIFEST_FILE,
    PAIRED_COLUMNS,
    PAIRED_FILE,
    RUN_FILE,
    SEALED_FILES,
    SPLIT_COLUMNS,
    SPLITS_FILE,
    SUMMARY_COLUMNS,
    SUMMARY_FILE,
    sort_splits,
    task_dir,
)
from nbvslr.results.lock import TaskLocks
from nbvslr.results.read import (
    Tables,
    TaskResults,
    find_task_dirs,
    is_task_dir,
    load_results,
    load_tables,
    load_task,
    model_order,
    read_splits,
)
from nbvslr.results.write import seal_tables, write_task_outputs

__all__ = [
    "CHECKPOINTS", "CURVE_FILE", "DEFAULT_OUT", "FLOAT_FORMAT", "MANIFEST_FILE", "PAIRED_COLUMNS",
    "PAIRED_FILE", "SEALED_FILES",
    "RUN_FILE", "SPLITS_FILE", "SPLIT_COLUMNS", "SUMMARY_COLUMNS", "SUMMARY_FILE", "Checkpoints",
    "Expected", "MemoryCheckpoints", "TaskLocks",
    "Tables", "TaskResults", "atomic_write_bytes", "atomic_write_text", "csv_gz_bytes",
    "find_task_dirs", "is_task_dir", "json_bytes", "load_results", "load_tables", "load_task",
    "model_order",
    "read_splits", "remove_temp_files", "seal_tables", "sort_splits", "task_dir",
    "write_csv_gz", "write_json",
    "write_task_outputs",
]
