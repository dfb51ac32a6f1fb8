"""One `Engine` per dataset content (`engine`): the index built once, every result computed on demand and kept in
bounded caches, work done ahead in background threads; `registry`: the engines a process keeps, admitted under the
server's memory budget (`budget`) and dropped when idle; `warmup`: the compiled kernels warmed up (in a child
process in the app); `heap`: freed memory handed back; `adhoc`: a typed question scored as the dataset's own.
"""
