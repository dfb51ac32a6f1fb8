import cProfile, time, builtins
P = getattr(builtins, "_PROF", None)
if P is None:
    P = builtins._PROF = cProfile.Profile(); builtins._PROF_T = []
t = time.perf_counter()
P.enable()
try:
    exec(compile(open("app.py").read(), "app.py", "exec"), {"__name__": "__main__"})
finally:
    P.disable(); builtins._PROF_T.append(time.perf_counter() - t)
