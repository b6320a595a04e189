"""vox.cli: the `vox` command. Each subcommand lives in its own module cmd_<name>.py exposing
`register(subparsers)` (adds its parser, sets `func`) — main.py collects them."""
