"""Diagnostic: can one process of the sandbox PTRACE_SEIZE a thread of another (its parent)?"""
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
r, w = os.pipe()
threading.Thread(target=lambda: (os.write(w, str(threading.get_native_id()).encode().ljust(16)), time.sleep(5)),
                 daemon=True).start()
tid = int(os.read(r, 16))
print("uid", os.getuid(), "pid", os.getpid(), "tid", tid, "dumpable", open("/proc/self/status").read().count("x"), flush=True)
child = os.fork()
if child == 0:
    rc = libc.ptrace(0x4206, tid, None, None)
    print("seize rc", rc, "errno", ctypes.get_errno(), flush=True)
    os._exit(0)
os.waitpid(child, 0)
