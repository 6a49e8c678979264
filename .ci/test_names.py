#!/usr/bin/env python3
"""Test names CTest can run.

catch_discover_tests hands each TEST_CASE name to the test binary on its
command line, where ';' splits it, a leading '-' reads as an option and a
backslash is an escape: such a test fails in CI without ever running.
Prints file:line per bad name; exits 1 if there is any.
"""
import re
import subprocess
import sys

CASE = re.compile(r'TEST_CASE\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
LIT = re.compile(r'"((?:[^"\\]|\\.)*)"')


def main():
    files = subprocess.run(["git", "ls-files", "tests/*_test.cc"],
                           capture_output=True, text=True).stdout.split()
    bad = 0
    for f in files:
        try:
            text = open(f, encoding="utf-8").read()
        except OSError:
            continue
        for m in CASE.finditer(text):
            name = "".join(LIT.findall(m.group(1)))
            if name.startswith("-") or ";" in name or "\\" in name:
                line = text.count("\n", 0, m.start()) + 1
                print(f"{f}:{line}: test-name: {name!r} has ';', a backslash "
                      "or a leading '-': CTest cannot run it (rename it)")
                bad += 1
    if bad:
        return 1
    print("test names: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
