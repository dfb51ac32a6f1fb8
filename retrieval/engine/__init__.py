"""One `Engine` per dataset content (`engine`): the index built once, every result computed on demand and kept
in bounded caches, work done ahead in background threads, the kernels' warm-up; `adhoc`: a typed question scored
as the dataset's own.
"""
