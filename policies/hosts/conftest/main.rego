# METADATA
# title: conftest's default namespace
# description: |
#   conftest queries package main unless told otherwise, so the plain
#   `conftest test --combine -p <policy> DIR` reports here what package
#   flipflop reports to `--namespace flipflop`: the same deny and warn,
#   each result once. Without it that command ran no rule and passed.
#   Only the conftest folder holds this package (the OPA bundle's roots are
#   flipflop's own); it defines deny and warn only, so a conftest run that
#   adds policies of its own in package main keeps them beside these.
package main

import data.flipflop

deny contains result if some result in flipflop.deny

warn contains result if some result in flipflop.warn
