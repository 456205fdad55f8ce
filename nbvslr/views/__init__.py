"""What a reader sees of finished runs: ``plots`` (the curves, Figure 1) and ``report``
(the Markdown or CSV table), both from saved results and ``nbvslr.analysis``.

Imported by module (``from nbvslr.views import plots``); this file imports nothing.
"""
