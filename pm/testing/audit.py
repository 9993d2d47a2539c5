"""The start of a script that records every file a Python process opens and every folder it lists
(``sys.addaudithook``): the guard of the shortcut's idea, that whatever a command reads is noted by
:mod:`pm.base.watch`. A test appends what to run and prints ``opened``, ``listed`` and a Watch's
``seen``, in a process of its own (an audit hook cannot be removed)."""

HOOK = r'''
import json, os, sys
opened, listed = set(), set()
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.add(os.fsdecode(args[0]))
    elif event in ("os.listdir", "os.scandir") and args[0] is not None:
        listed.add(os.fsdecode(args[0]))
sys.addaudithook(hook)
'''
