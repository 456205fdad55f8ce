"""The shipped configs, as the config layer names them: ``nbvslr.catalog``'s functions.

The catalog itself sits below every layer that imports numpy (``nbvslr/catalog.py``), so
``nbvslr configs`` lists and shows them without importing numpy, pandas or the models.
"""

from __future__ import annotations

from nbvslr.catalog import SUFFIX, ShippedConfig, resolve_config, shipped_config, shipped_configs

__all__ = ["SUFFIX", "ShippedConfig", "resolve_config", "shipped_config", "shipped_configs"]
