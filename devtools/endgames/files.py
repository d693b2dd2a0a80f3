"""A database's file: its raw array, and a header beside it (`path` + ".json") that holds
what reading it needs and the array's SHA-256, checked on every load. Diffusion's and
ZigZag's databases differ only in their arrays and headers' contents."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np


def write(array: np.ndarray, dtype: str, path: Path, header: dict[str, Any]) -> str:
    """Write `array` as `dtype` to `path` (unless it is already the file memory-mapped
    there: built in place) and `header` with the checksum beside it; returns the SHA-256."""
    data = array.astype(dtype, copy=False)
    digest = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()
    if not (isinstance(data, np.memmap) and Path(data.filename or "") == path.resolve()):
        data.tofile(path)
    Path(f"{path}.json").write_text(json.dumps({**header, "sha256": digest}, indent=1) + "\n")
    return digest


def header_of(path: Path) -> dict[str, Any]:
    header: dict[str, Any] = json.loads(Path(f"{path}.json").read_text())
    return header


def read(path: Path, dtype: str, header: dict[str, Any]) -> np.memmap:
    """The array written by `write`, memory-mapped; ValueError if its checksum is wrong."""
    data = np.memmap(path, dtype=dtype, mode="r")
    if hashlib.sha256(data.tobytes()).hexdigest() != header["sha256"]:
        raise ValueError(f"{path}: the array does not match its checksum")
    return data
