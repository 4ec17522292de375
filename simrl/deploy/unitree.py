"""Unitree SDK2 low-level DDS messages, and the CRC32 the robot checks.

Two layouts: `unitree_go` (Go2, B2, H1: 20 motors) and `unitree_hg` (G1, H1-2: 35 motors), each a
`LowCmd_` (to the robot, topic "rt/lowcmd") and a `LowState_` (from it, "rt/lowstate"). The types
have the SDK's field names, types, array lengths and DDS type names ("unitree_go.msg.dds_.LowCmd_",
...), so they interoperate on the wire with the SDK (C++ or Python). Written from the published
definitions (unitree_sdk2_python: unitree_sdk2py/idl/, utils/crc.py, idl/default.py).

Why the CRC: the robot drops a LowCmd whose `crc` is wrong (and a LowState carries one too). It is
computed over the message as its C struct (little-endian, natural alignment: 812 / 1180 / 1004 /
2092 bytes), read as uint32 words, all but the last (the `crc` field itself): CRC-32 with
polynomial 0x04C11DB7, init 0xFFFFFFFF, each word's bits from the most significant, no reflection,
no final xor (CRC-32/MPEG-2 over the words' big-endian bytes).

    cmd = lowcmd_go()                   # SDK defaults (idl/default.py): all zero
    cmd.motor_cmd[0].q = 0.1
    writer.write(with_crc(cmd))         # sets cmd.crc

The C struct is not the CDR on the wire: CDR aligns each primitive to its own size and has no struct
alignment or tail padding, so a nested struct starting with a uint8 (`MotorCmd_.mode`, ...) begins
right after the previous field; the CDR body is 4 bytes shorter (`pack(msg, cdr=True)`).

The packing and CRC functions need only numpy and work on any object with the SDK's field names
(these types or unitree_sdk2py's own); the message types and the default constructors need
cyclonedds (the `deploy` extra).
"""

import struct
import types
import zlib
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

TOPIC_LOWCMD = "rt/lowcmd"
TOPIC_LOWSTATE = "rt/lowstate"

GO_LOWCMD = "unitree_go.msg.dds_.LowCmd_"
GO_LOWSTATE = "unitree_go.msg.dds_.LowState_"
HG_LOWCMD = "unitree_hg.msg.dds_.LowCmd_"
HG_LOWSTATE = "unitree_hg.msg.dds_.LowState_"

# What the SDK's Go2/B2 low-level examples set before sending (not in default.py's defaults).
GO_HEAD = (0xFE, 0xEF)
GO_LEVEL_FLAG_LOW = 0xFF
POS_STOP_F = 2.146e9  # motor_cmd.q meaning "no position target"
VEL_STOP_F = 16000.0  # motor_cmd.dq meaning "no velocity target"

# ---------------------------------------------------------------------------------------------
# Layouts: one table per struct, the single description behind both packings (C struct, CDR).
# A field is (name, kind, count): kind a struct format char (B uint8, H uint16, h int16, I uint32,
# i int32, f float32) or a nested _Spec; count 0 for a scalar, n for an array of n.


@dataclass(frozen=True)
class _Spec:
    typename: str
    fields: tuple[tuple[str, "str | _Spec", int], ...]


def _go(name: str, *fields: tuple[str, "str | _Spec", int]) -> _Spec:
    return _Spec(f"unitree_go.msg.dds_.{name}", fields)


def _hg(name: str, *fields: tuple[str, "str | _Spec", int]) -> _Spec:
    return _Spec(f"unitree_hg.msg.dds_.{name}", fields)


_GO_MOTOR_CMD = _go("MotorCmd_", ("mode", "B", 0), ("q", "f", 0), ("dq", "f", 0), ("tau", "f", 0),
                    ("kp", "f", 0), ("kd", "f", 0), ("reserve", "I", 3))
_GO_BMS_CMD = _go("BmsCmd_", ("off", "B", 0), ("reserve", "B", 3))
_GO_LOWCMD = _go(
    "LowCmd_", ("head", "B", 2), ("level_flag", "B", 0), ("frame_reserve", "B", 0), ("sn", "I", 2),
    ("version", "I", 2), ("bandwidth", "H", 0), ("motor_cmd", _GO_MOTOR_CMD, 20),
    ("bms_cmd", _GO_BMS_CMD, 0), ("wireless_remote", "B", 40), ("led", "B", 12), ("fan", "B", 2),
    ("gpio", "B", 0), ("reserve", "I", 0), ("crc", "I", 0))
_GO_IMU = _go("IMUState_", ("quaternion", "f", 4), ("gyroscope", "f", 3), ("accelerometer", "f", 3),
              ("rpy", "f", 3), ("temperature", "B", 0))
_GO_MOTOR_STATE = _go(
    "MotorState_", ("mode", "B", 0), ("q", "f", 0), ("dq", "f", 0), ("ddq", "f", 0), ("tau_est", "f", 0),
    ("q_raw", "f", 0), ("dq_raw", "f", 0), ("ddq_raw", "f", 0), ("temperature", "B", 0), ("lost", "I", 0),
    ("reserve", "I", 2))
_GO_BMS_STATE = _go(
    "BmsState_", ("version_high", "B", 0), ("version_low", "B", 0), ("status", "B", 0), ("soc", "B", 0),
    ("current", "i", 0), ("cycle", "H", 0), ("bq_ntc", "B", 2), ("mcu_ntc", "B", 2), ("cell_vol", "H", 15))
_GO_LOWSTATE = _go(
    "LowState_", ("head", "B", 2), ("level_flag", "B", 0), ("frame_reserve", "B", 0), ("sn", "I", 2),
    ("version", "I", 2), ("bandwidth", "H", 0), ("imu_state", _GO_IMU, 0),
    ("motor_state", _GO_MOTOR_STATE, 20), ("bms_state", _GO_BMS_STATE, 0), ("foot_force", "h", 4),
    ("foot_force_est", "h", 4), ("tick", "I", 0), ("wireless_remote", "B", 40), ("bit_flag", "B", 0),
    ("adc_reel", "f", 0), ("temperature_ntc1", "B", 0), ("temperature_ntc2", "B", 0), ("power_v", "f", 0),
    ("power_a", "f", 0), ("fan_frequency", "H", 4), ("reserve", "I", 0), ("crc", "I", 0))

_HG_MOTOR_CMD = _hg("MotorCmd_", ("mode", "B", 0), ("q", "f", 0), ("dq", "f", 0), ("tau", "f", 0),
                    ("kp", "f", 0), ("kd", "f", 0), ("reserve", "I", 0))
_HG_LOWCMD = _hg("LowCmd_", ("mode_pr", "B", 0), ("mode_machine", "B", 0), ("motor_cmd", _HG_MOTOR_CMD, 35),
                 ("reserve", "I", 4), ("crc", "I", 0))
_HG_IMU = _hg("IMUState_", ("quaternion", "f", 4), ("gyroscope", "f", 3), ("accelerometer", "f", 3),
              ("rpy", "f", 3), ("temperature", "h", 0))
_HG_MOTOR_STATE = _hg(
    "MotorState_", ("mode", "B", 0), ("q", "f", 0), ("dq", "f", 0), ("ddq", "f", 0), ("tau_est", "f", 0),
    ("temperature", "h", 2), ("vol", "f", 0), ("sensor", "I", 2), ("motorstate", "I", 0), ("reserve", "I", 4))
_HG_LOWSTATE = _hg(
    "LowState_", ("version", "I", 2), ("mode_pr", "B", 0), ("mode_machine", "B", 0), ("tick", "I", 0),
    ("imu_state", _HG_IMU, 0), ("motor_state", _HG_MOTOR_STATE, 35), ("wireless_remote", "B", 40),
    ("reserve", "I", 4), ("crc", "I", 0))
# Not parts of the hg LowCmd_/LowState_, but published with them in unitree_hg.
_HG_BMS_CMD = _hg("BmsCmd_", ("cmd", "B", 0), ("reserve", "B", 40))
_HG_BMS_STATE = _hg(
    "BmsState_", ("version_high", "B", 0), ("version_low", "B", 0), ("fn", "B", 0), ("cell_vol", "H", 40),
    ("bmsvoltage", "I", 3), ("current", "i", 0), ("soc", "B", 0), ("soh", "B", 0), ("temperature", "h", 12),
    ("cycle", "H", 0), ("manufacturer_date", "H", 0), ("bmsstate", "I", 5), ("reserve", "I", 3))

_SPECS = {s.typename: s for s in (_GO_LOWCMD, _GO_LOWSTATE, _HG_LOWCMD, _HG_LOWSTATE)}


@dataclass(frozen=True)
class Layout:
    """A message's byte layout: `size` in bytes, `offsets` of each field (dotted paths such as
    "motor_cmd[3].q"; an array's offset is its first element's), and the `struct` that packs the
    flattened field values (little-endian, padding explicit)."""

    typename: str
    cdr: bool
    size: int
    offsets: dict[str, int]
    struct: struct.Struct


def _align(offset: int, n: int) -> int:
    return -(-offset // n) * n


def _struct_align(spec: _Spec) -> int:
    return max(_struct_align(k) if isinstance(k, _Spec) else struct.calcsize(k) for _, k, _ in spec.fields)


def _build_layout(spec: _Spec, cdr: bool) -> Layout:
    # C: a nested struct is aligned to its widest member and padded to a multiple of it.
    # CDR (XCDR1, and XCDR2 but for its DHEADERs; no member here is wider than 4 bytes): only
    # primitives align, each to its own size, counted from the start of the body.
    fmt: list[str] = ["<"]
    offsets: dict[str, int] = {}
    pos = 0

    def pad_to(n: int) -> None:
        nonlocal pos
        new = _align(pos, n)
        if new > pos:
            fmt.append(f"{new - pos}x")
        pos = new

    def walk(s: _Spec, prefix: str) -> None:
        nonlocal pos
        if not cdr:
            pad_to(_struct_align(s))
        for name, kind, count in s.fields:
            path = prefix + name
            if isinstance(kind, _Spec):
                if count == 0:
                    walk(kind, path + ".")
                for i in range(count):
                    walk(kind, f"{path}[{i}].")
                continue
            width = struct.calcsize(kind)
            pad_to(width)
            offsets[path] = pos
            fmt.append(f"{max(count, 1)}{kind}")
            pos += width * max(count, 1)
        if not cdr:
            pad_to(_struct_align(s))

    walk(spec, "")
    # Name the first field of a nested struct also by the struct itself ("motor_cmd[3]").
    for path in list(offsets):
        head, dot, _ = path.rpartition(".")
        if dot and head not in offsets:
            offsets[head] = offsets[path]
    packer = struct.Struct("".join(fmt))
    assert packer.size == pos, (spec.typename, packer.size, pos)
    return Layout(spec.typename, cdr, pos, offsets, packer)


_LAYOUTS = {(name, cdr): _build_layout(spec, cdr) for name, spec in _SPECS.items() for cdr in (False, True)}


def layout(typename: str, cdr: bool = False) -> Layout:
    """The C-struct (default) or CDR layout of a LowCmd_/LowState_, by DDS type name."""
    try:
        return _LAYOUTS[typename, cdr]
    except KeyError:
        raise KeyError(f"no layout for {typename!r}: one of {sorted(_SPECS)}") from None


def _flatten(spec: _Spec, obj: Any, out: list) -> None:
    for name, kind, count in spec.fields:
        value = getattr(obj, name)
        if count and len(value) != count:
            raise ValueError(f"{spec.typename}.{name}: {len(value)} elements, the type has {count}")
        if isinstance(kind, _Spec):
            for item in value if count else (value,):
                _flatten(kind, item, out)
        elif count:
            out.extend(value)
        else:
            out.append(value)


def _typename(msg: Any) -> str:
    name = getattr(msg, "__idl_typename__", None)
    if name is None:
        raise TypeError(f"{type(msg).__name__} is no DDS message (no __idl_typename__)")
    return name


def _pack(typename: str, msg: Any, cdr: bool) -> bytes:
    lay = layout(typename, cdr)
    values: list = []
    _flatten(_SPECS[typename], msg, values)
    return lay.struct.pack(*values)


def pack(msg: Any, *, cdr: bool = False) -> bytes:
    """`msg` as its C struct (what the CRC is over), or with `cdr=True` as its XCDR1 body (what
    `msg.serialize()` sends after its 4-byte encapsulation header); by `msg.__idl_typename__`."""
    return _pack(_typename(msg), msg, cdr)


def pack_lowcmd_go(msg: Any) -> bytes:
    """A unitree_go LowCmd_ as its C struct (812 bytes)."""
    return _pack(GO_LOWCMD, msg, False)


def pack_lowstate_go(msg: Any) -> bytes:
    """A unitree_go LowState_ as its C struct (1180 bytes)."""
    return _pack(GO_LOWSTATE, msg, False)


def pack_lowcmd_hg(msg: Any) -> bytes:
    """A unitree_hg LowCmd_ as its C struct (1004 bytes)."""
    return _pack(HG_LOWCMD, msg, False)


def pack_lowstate_hg(msg: Any) -> bytes:
    """A unitree_hg LowState_ as its C struct (2092 bytes)."""
    return _pack(HG_LOWSTATE, msg, False)


# ---------------------------------------------------------------------------------------------
# CRC. Feeding each word's bits from the most significant is the unreflected CRC-32/MPEG-2 over
# the words' big-endian bytes; that equals zlib's reflected CRC-32 over the same bytes with each
# byte's bits reversed, its result bit-reversed (and zlib's final xor undone). zlib's C loop
# makes it ~100x faster than a Python table loop.

_REV8 = bytes(int(f"{b:08b}"[::-1], 2) for b in range(256))


def _crc32_msb_bytes(data: bytes) -> int:
    """CRC-32/MPEG-2 of `data` (poly 0x04C11DB7, init 0xFFFFFFFF, unreflected, no final xor)."""
    reflected = zlib.crc32(data.translate(_REV8)) ^ 0xFFFFFFFF
    return int.from_bytes(reflected.to_bytes(4, "little").translate(_REV8), "big")


def crc32_words(words: np.ndarray) -> int:
    """Unitree's CRC32 of uint32 `words` (all of them: leave out the crc word yourself)."""
    return _crc32_msb_bytes(np.asarray(words, dtype=np.uint32).astype(">u4").tobytes())


def message_crc(msg: Any) -> int:
    """The crc a LowCmd_/LowState_ must carry: over its C struct's words but the last."""
    data = pack(msg)
    return crc32_words(np.frombuffer(data, dtype="<u4", count=len(data) // 4 - 1))


_Msg = TypeVar("_Msg")


def with_crc(msg: _Msg) -> _Msg:
    """Set `msg.crc` to its CRC and return `msg` (the same object)."""
    msg.crc = message_crc(msg)  # type: ignore[attr-defined]
    return msg


def check_crc(msg: Any) -> bool:
    """Whether `msg.crc` is right (e.g. a LowState_ as received)."""
    return msg.crc == message_crc(msg)


# ---------------------------------------------------------------------------------------------
# The DDS types (cyclonedds). Python names carry the layout (Go.../Hg...); the DDS type names are
# the SDK's. Final extensibility and sequential member ids, like the SDK's generated code.

try:
    import cyclonedds.idl as _idl
    import cyclonedds.idl.annotations as _annotate
    import cyclonedds.idl.types as _t
except ImportError:  # packing and CRC work without it
    HAVE_CYCLONEDDS = False
else:
    HAVE_CYCLONEDDS = True

_TYPE_NAMES = ("GoMotorCmd_", "GoBmsCmd_", "GoLowCmd_", "GoIMUState_", "GoMotorState_", "GoBmsState_",
               "GoLowState_", "HgMotorCmd_", "HgLowCmd_", "HgIMUState_", "HgMotorState_", "HgLowState_",
               "HgBmsCmd_", "HgBmsState_", "GoWirelessController_")

_FORMAT_TYPES = {"B": "uint8", "H": "uint16", "h": "int16", "I": "uint32", "i": "int32", "f": "float32"}
_GO_WIRELESS = _go("WirelessController_", ("lx", "f", 0), ("ly", "f", 0), ("rx", "f", 0), ("ry", "f", 0),
                   ("keys", "H", 0))
_DDS_SPECS = (_GO_MOTOR_CMD, _GO_BMS_CMD, _GO_LOWCMD, _GO_IMU, _GO_MOTOR_STATE, _GO_BMS_STATE, _GO_LOWSTATE,
              _HG_MOTOR_CMD, _HG_LOWCMD, _HG_IMU, _HG_MOTOR_STATE, _HG_LOWSTATE, _HG_BMS_CMD, _HG_BMS_STATE,
              _GO_WIRELESS)  # parts before the structs that hold them


def _py_name(spec: _Spec) -> str:
    layout, name = spec.typename.split(".")[0], spec.typename.rsplit(".", 1)[1]
    return ("Go" if layout == "unitree_go" else "Hg") + name


if HAVE_CYCLONEDDS:

    def _idl_struct(spec: _Spec, made: dict[str, type]) -> type:
        """The IdlStruct of `spec`, made from the same table the packing reads (one description
        of each struct): its fields in order, final, sequential member ids, as the SDK's."""
        fields = {}
        for name, kind, count in spec.fields:
            t = made[kind.typename] if isinstance(kind, _Spec) else getattr(_t, _FORMAT_TYPES[kind])
            fields[name] = _t.array[t, count] if count else t
        name = _py_name(spec)

        def body(ns: dict) -> None:
            ns.update(__annotations__=fields, __module__=__name__, __qualname__=name)

        cls = types.new_class(name, (_idl.IdlStruct,), {"typename": spec.typename}, body)
        return dataclass(_annotate.final(_annotate.autoid("sequential")(cls)))

    _MADE: dict[str, type] = {}
    for _spec in _DDS_SPECS:
        _MADE[_spec.typename] = globals()[_py_name(_spec)] = _idl_struct(_spec, _MADE)

else:

    def __getattr__(name: str) -> Any:
        if name in _TYPE_NAMES:
            raise ImportError(f"simrl.deploy.unitree.{name} needs cyclonedds: pip install 'simrl[deploy]'")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# Default constructors: the SDK's (unitree_sdk2py/idl/default.py): every field zero. A Go2/B2
# LowCmd is sent with head GO_HEAD and level_flag GO_LEVEL_FLAG_LOW (the SDK's examples set them).


def _need_cyclonedds() -> None:
    if not HAVE_CYCLONEDDS:
        raise ImportError("the Unitree message types need cyclonedds: pip install 'simrl[deploy]'")


def _zero(spec: _Spec) -> Any:
    """An instance of `spec`'s type with every field zero (the SDK's defaults, idl/default.py)."""
    def one(kind: "str | _Spec") -> Any:
        return _zero(kind) if isinstance(kind, _Spec) else (0.0 if kind == "f" else 0)

    args = [[one(kind) for _ in range(count)] if count else one(kind) for _, kind, count in spec.fields]
    return _MADE[spec.typename](*args)


def wireless_controller_type() -> type:
    """unitree_go's WirelessController_ (topic rt/wirelesscontroller): sticks lx, ly, rx, ry and
    the 16 button bits `keys`."""
    _need_cyclonedds()
    return _MADE[_GO_WIRELESS.typename]


def lowcmd_go() -> Any:
    """A unitree_go LowCmd_ (Go2, B2, H1), all zero as the SDK's default."""
    _need_cyclonedds()
    return _zero(_GO_LOWCMD)


def lowstate_go() -> Any:
    """A unitree_go LowState_, all zero as the SDK's default."""
    _need_cyclonedds()
    return _zero(_GO_LOWSTATE)


def lowcmd_hg() -> Any:
    """A unitree_hg LowCmd_ (G1, H1-2), all zero as the SDK's default."""
    _need_cyclonedds()
    return _zero(_HG_LOWCMD)


def lowstate_hg() -> Any:
    """A unitree_hg LowState_, all zero as the SDK's default."""
    _need_cyclonedds()
    return _zero(_HG_LOWSTATE)
