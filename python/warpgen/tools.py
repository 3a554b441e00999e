"""SASS through the CUDA toolkit's disassemblers (nvdisasm, cuobjdump), or
through the warpgen command, which knows the disassembler found when it was
built.

Looks where the warpgen command looks: WARPGEN_NVDISASM, then the toolkit's
bin/ (CUDA_PATH, CUDA_HOME, /usr/local/cuda), then PATH; nvdisasm first,
since it prints the SASS alone.

shutil, subprocess, sysconfig and tempfile are imported by the functions
that use them: `import warpgen` should cost next to nothing.
"""

import os

from . import _lib
from .errors import Error, NotFoundError

_TOOLS = ("nvdisasm", "cuobjdump")


def find_disassembler():
    """(path, is_nvdisasm) of the disassembler to use, or None."""
    import shutil
    env = os.environ.get("WARPGEN_NVDISASM")
    if env and os.access(env, os.X_OK):
        return env, "cuobjdump" not in os.path.basename(env)
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"),
             "/usr/local/cuda"]
    for tool in _TOOLS:
        for root in filter(None, roots):
            path = os.path.join(root, "bin", tool)
            if os.access(path, os.X_OK):
                return path, tool == "nvdisasm"
        path = shutil.which(tool)
        if path:
            return path, tool == "nvdisasm"
    return None


def find_command():
    """The warpgen command: WARPGEN_COMMAND, next to the loaded library (a
    build folder), the scripts folder pip installed it to, or PATH."""
    import shutil
    import sysconfig
    places = [os.environ.get("WARPGEN_COMMAND"),
              os.path.join(os.path.dirname(_lib.path), "warpgen"),
              os.path.join(sysconfig.get_path("scripts"), "warpgen"),
              shutil.which("warpgen")]
    for path in filter(None, places):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _run(args, what):
    import subprocess
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise Error(f"{what} failed ({done.returncode}): "
                    f"{done.stderr.strip()}", _lib.WG_EIO)
    return done.stdout


def disassemble(cubin, spec_text=None):
    """The SASS text of a cubin image (bytes). Without a disassembler, asks
    the warpgen command for the SASS of spec_text."""
    import subprocess
    import tempfile
    found = find_disassembler()
    if found is not None:
        tool, is_nvdisasm = found
        with tempfile.NamedTemporaryFile(prefix="warpgen-",
                                         suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            return _run([tool, "-c" if is_nvdisasm else "-sass", f.name], tool)
    command = find_command()
    if command is not None and spec_text is not None:
        done = subprocess.run([command, "sass", spec_text],
                              capture_output=True, text=True)
        if done.returncode == 0:
            return done.stdout
    raise NotFoundError(
        "no nvdisasm or cuobjdump found (looked at WARPGEN_NVDISASM, the "
        "CUDA toolkit's bin/ and PATH), and no warpgen command that has "
        "one; install one ('pip install nvidia-cuda-nvdisasm' and set "
        "WARPGEN_NVDISASM to its bin/nvdisasm) or put the CUDA toolkit's "
        "bin/ on PATH", _lib.WG_ENOTFOUND)
