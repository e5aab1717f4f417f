"""The adapters, one module per kind: app kinds (apps/), fronts (fronts/), app server kinds
(servers/), load tools (loadtools/: with the load command, loadcmd, and the tools' per-request data,
perrequest), each package with its REGISTRY (registry), and the checks of a stack's fields the adapters
share (stackfields)."""
