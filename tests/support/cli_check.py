"""Shared by the Python CLI tests: a fresh working folder, gpusc runs with an expected exit code,
and failing with a message."""
import os
import shutil
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def fresh_workdir(work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)


def runner(exe):
    """run(*args, rc=0): gpusc with these arguments, failing the test on another exit code."""

    def run(*args, rc=0):
        p = subprocess.run([exe, *args], capture_output=True, text=True)
        if p.returncode != rc:
            fail(f"gpusc {' '.join(args)}: exit {p.returncode}, expected {rc}\n{p.stdout}\n{p.stderr}")
        return p

    return run
