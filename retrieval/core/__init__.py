"""The foundation every layer imports: `errors` (InputError, the one exception a user sees), `params` (the
parameter table: bounds, steps, defaults, tuning grids, help; `Params`), `memo` (the bounded thread-safe cache) and
`workers` (the worker thread pools and background threads). Imports nothing else of the package.
"""
