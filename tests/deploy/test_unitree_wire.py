"""Unitree SDK2 low-level messages: C-struct layout and CRC (what the robot checks), and the CDR
on the wire (cyclonedds). Golden values are derived by hand from the published definitions
(unitree_sdk2_python: unitree_sdk2py/idl/unitree_{go,hg}/msg/dds_/, utils/crc.py)."""

from __future__ import annotations

import dataclasses
import random
import struct
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from simrl.deploy import unitree as u
from simrl.deploy.unitree import (
    GO_LOWCMD,
    GO_LOWSTATE,
    HG_LOWCMD,
    HG_LOWSTATE,
    check_crc,
    crc32_words,
    layout,
    message_crc,
    pack,
    pack_lowcmd_go,
    pack_lowcmd_hg,
    pack_lowstate_go,
    pack_lowstate_hg,
    with_crc,
)

TYPES = [GO_LOWCMD, GO_LOWSTATE, HG_LOWCMD, HG_LOWSTATE]
SIZES = {GO_LOWCMD: 812, GO_LOWSTATE: 1180, HG_LOWCMD: 1004, HG_LOWSTATE: 2092}  # crc.py's comments

# --- golden offsets, by hand from the definitions ------------------------------------------------
# C struct: each primitive at a multiple of its size; a nested struct at a multiple of its widest
# member (4 for all here), its size padded to that.
#   go MotorCmd_: mode u8 @0, pad 3, q dq tau kp kd f32 @4..24, reserve u32[3] @24..36 -> 36.
#   go LowCmd_: head u8[2] @0, level_flag @2, frame_reserve @3, sn u32[2] @4, version u32[2] @12,
#     bandwidth u16 @20, pad 2, motor_cmd[20] @24 (stride 36, ends 744), bms_cmd {off u8, u8[3]}
#     @744, wireless_remote u8[40] @748, led u8[12] @788, fan u8[2] @800, gpio @802, pad 1,
#     reserve u32 @804, crc @808 -> 812.
#   go IMUState_: quaternion f32[4] @0, gyroscope f32[3] @16, accelerometer @28, rpy @40,
#     temperature u8 @52, tail pad 3 -> 56.
#   go MotorState_: mode @0, pad 3, q dq ddq tau_est q_raw dq_raw ddq_raw f32 @4..32,
#     temperature u8 @32, pad 3, lost u32 @36, reserve u32[2] @40 -> 48.
#   go BmsState_: 4 x u8 @0..4, current i32 @4, cycle u16 @8, bq_ntc u8[2] @10, mcu_ntc @12,
#     cell_vol u16[15] @14..44 -> 44.
#   go LowState_: header as LowCmd_ to bandwidth @20, pad 2, imu_state @24..80,
#     motor_state[20] @80 (stride 48, ends 1040), bms_state @1040..1084, foot_force i16[4] @1084,
#     foot_force_est @1092, tick @1100, wireless_remote @1104, bit_flag @1144, pad 3,
#     adc_reel f32 @1148, temperature_ntc1 @1152, ntc2 @1153, pad 2, power_v @1156, power_a @1160,
#     fan_frequency u16[4] @1164, reserve @1172, crc @1176 -> 1180.
#   hg MotorCmd_: mode @0, pad 3, q dq tau kp kd @4..24, reserve u32 @24 -> 28.
#   hg LowCmd_: mode_pr @0, mode_machine @1, pad 2, motor_cmd[35] @4 (stride 28, ends 984),
#     reserve u32[4] @984, crc @1000 -> 1004.
#   hg IMUState_: as go's but temperature i16 @52, tail pad 2 -> 56.
#   hg MotorState_: mode @0, pad 3, q dq ddq tau_est @4..20, temperature i16[2] @20, vol f32 @24,
#     sensor u32[2] @28, motorstate @36, reserve u32[4] @40 -> 56.
#   hg LowState_: version u32[2] @0, mode_pr @8, mode_machine @9, pad 2, tick @12, imu_state @16..72,
#     motor_state[35] @72 (stride 56, ends 2032), wireless_remote @2032, reserve u32[4] @2072,
#     crc @2088 -> 2092.
C_OFFSETS = {
    GO_LOWCMD: {"head": 0, "level_flag": 2, "frame_reserve": 3, "sn": 4, "version": 12, "bandwidth": 20,
                "motor_cmd[0]": 24, "motor_cmd[0].mode": 24, "motor_cmd[0].q": 28, "motor_cmd[0].dq": 32,
                "motor_cmd[0].tau": 36, "motor_cmd[0].kp": 40, "motor_cmd[0].kd": 44,
                "motor_cmd[0].reserve": 48, "motor_cmd[1]": 60, "motor_cmd[1].q": 64, "motor_cmd[19]": 708,
                "motor_cmd[19].q": 712, "bms_cmd.off": 744, "bms_cmd.reserve": 745, "wireless_remote": 748,
                "led": 788, "fan": 800, "gpio": 802, "reserve": 804, "crc": 808},
    GO_LOWSTATE: {"bandwidth": 20, "imu_state.quaternion": 24, "imu_state.gyroscope": 40,
                  "imu_state.accelerometer": 52, "imu_state.rpy": 64, "imu_state.temperature": 76,
                  "motor_state[0].mode": 80, "motor_state[0].q": 84, "motor_state[0].ddq_raw": 108,
                  "motor_state[0].temperature": 112, "motor_state[0].lost": 116,
                  "motor_state[0].reserve": 120, "motor_state[1].mode": 128, "motor_state[19].mode": 992,
                  "bms_state.version_high": 1040, "bms_state.soc": 1043, "bms_state.current": 1044,
                  "bms_state.cycle": 1048, "bms_state.bq_ntc": 1050, "bms_state.mcu_ntc": 1052,
                  "bms_state.cell_vol": 1054, "foot_force": 1084, "foot_force_est": 1092, "tick": 1100,
                  "wireless_remote": 1104, "bit_flag": 1144, "adc_reel": 1148, "temperature_ntc1": 1152,
                  "temperature_ntc2": 1153, "power_v": 1156, "power_a": 1160, "fan_frequency": 1164,
                  "reserve": 1172, "crc": 1176},
    HG_LOWCMD: {"mode_pr": 0, "mode_machine": 1, "motor_cmd[0].mode": 4, "motor_cmd[0].q": 8,
                "motor_cmd[0].kd": 24, "motor_cmd[0].reserve": 28, "motor_cmd[1].mode": 32,
                "motor_cmd[34].mode": 956, "motor_cmd[34].q": 960, "reserve": 984, "crc": 1000},
    HG_LOWSTATE: {"version": 0, "mode_pr": 8, "mode_machine": 9, "tick": 12, "imu_state.quaternion": 16,
                  "imu_state.rpy": 56, "imu_state.temperature": 68, "motor_state[0].mode": 72,
                  "motor_state[0].q": 76, "motor_state[0].temperature": 92, "motor_state[0].vol": 96,
                  "motor_state[0].sensor": 100, "motor_state[0].motorstate": 108,
                  "motor_state[0].reserve": 112, "motor_state[1].mode": 128, "motor_state[34].mode": 1976,
                  "wireless_remote": 2032, "reserve": 2072, "crc": 2088},
}
# CDR (XCDR1 body, after the 4-byte header): each primitive at a multiple of its size from the
# body's start, and nothing else: no struct alignment, no tail padding. So the first nested struct
# that starts with a u8 after an odd end (go: bandwidth ends @22 -> motor_cmd[0].mode @22, its q @24;
# go LowState_: imu temperature @76 -> motor_state[0].mode @77, q @80; hg LowCmd_: mode @2, q @4;
# hg LowState_: imu temperature ends @70 -> mode @70, q @72) starts early, and everything from its
# first float on sits 4 bytes before its C offset; the body is 4 bytes shorter than the struct.
CDR_OFFSETS = {
    GO_LOWCMD: {"bandwidth": 20, "motor_cmd[0].mode": 22, "motor_cmd[0].q": 24, "motor_cmd[1].mode": 56,
                "motor_cmd[1].q": 60, "bms_cmd.off": 740, "wireless_remote": 744, "gpio": 798,
                "reserve": 800, "crc": 804},
    GO_LOWSTATE: {"imu_state.quaternion": 24, "imu_state.temperature": 76, "motor_state[0].mode": 77,
                  "motor_state[0].q": 80, "motor_state[1].mode": 124, "bms_state.version_high": 1036,
                  "bms_state.current": 1040, "foot_force": 1080, "tick": 1096, "adc_reel": 1144,
                  "crc": 1172},
    HG_LOWCMD: {"mode_machine": 1, "motor_cmd[0].mode": 2, "motor_cmd[0].q": 4, "motor_cmd[1].mode": 28,
                "reserve": 980, "crc": 996},
    HG_LOWSTATE: {"tick": 12, "imu_state.temperature": 68, "motor_state[0].mode": 70, "motor_state[0].q": 72,
                  "motor_state[1].mode": 124, "wireless_remote": 2028, "crc": 2084},
}

# --- reference CRC, bit by bit from the definition ---------------------------------------------


def reference_crc(words: list[int]) -> int:
    """Poly 0x04C11DB7, init 0xFFFFFFFF, each word's bits from the most significant, no reflection,
    no final xor."""
    crc = 0xFFFFFFFF
    for word in words:
        for bit in range(31, -1, -1):
            feedback = (crc >> 31) ^ ((word >> bit) & 1)
            crc = (crc << 1) & 0xFFFFFFFF
            if feedback:
                crc ^= 0x04C11DB7
    return crc


def reference_message_crc(c_struct: bytes) -> int:
    words = struct.unpack(f"<{len(c_struct) // 4}I", c_struct)
    return reference_crc(list(words[:-1]))  # the last word is the crc field


# --- messages without cyclonedds: plain objects with the SDK's field names -----------------------


def plain(spec: u._Spec) -> SimpleNamespace:
    """An all-zero message of `spec` as a plain object (what the packing accepts: duck typing)."""
    obj = SimpleNamespace(__idl_typename__=spec.typename)
    for name, kind, count in spec.fields:
        if isinstance(kind, u._Spec):
            value = [plain(kind) for _ in range(count)] if count else plain(kind)
        else:
            zero = 0.0 if kind == "f" else 0
            value = [zero] * count if count else zero
        setattr(obj, name, value)
    return obj


RANGES = {"B": (0, 2**8), "H": (0, 2**16), "h": (-(2**15), 2**15), "I": (0, 2**32), "i": (-(2**31), 2**31)}


def draw(kind: str, rng: random.Random) -> float | int:
    """A random value of a primitive (floats exact in float32, so they survive a round trip)."""
    if kind == "f":
        return float(np.float32(rng.uniform(-1e3, 1e3)))
    return rng.randrange(*RANGES[kind])


def fill(spec: u._Spec, obj, rng: random.Random) -> None:
    """Set every field of `obj` to a random value of its type."""
    for name, kind, count in spec.fields:
        if isinstance(kind, u._Spec):
            for item in getattr(obj, name) if count else [getattr(obj, name)]:
                fill(kind, item, rng)
        else:
            setattr(obj, name, [draw(kind, rng) for _ in range(count)] if count else draw(kind, rng))


# --- layout -----------------------------------------------------------------------------------


@pytest.mark.parametrize("typename", TYPES)
def test_sizes_and_offsets_are_the_c_struct_s(typename):
    lay = layout(typename)
    assert lay.size == lay.struct.size == SIZES[typename]
    assert {k: lay.offsets[k] for k in C_OFFSETS[typename]} == C_OFFSETS[typename]
    assert lay.offsets["crc"] == lay.size - 4  # the crc is the last word: the CRC leaves it out
    assert len(pack(plain(u._SPECS[typename]))) == SIZES[typename]


@pytest.mark.parametrize("typename", TYPES)
def test_cdr_layout_is_4_bytes_shorter(typename):
    lay = layout(typename, cdr=True)
    assert lay.size == SIZES[typename] - 4
    assert {k: lay.offsets[k] for k in CDR_OFFSETS[typename]} == CDR_OFFSETS[typename]


def test_strides():
    go, hg = layout(GO_LOWCMD).offsets, layout(HG_LOWCMD).offsets
    assert [go[f"motor_cmd[{i}]"] for i in range(20)] == [24 + 36 * i for i in range(20)]
    assert [hg[f"motor_cmd[{i}].mode"] for i in range(35)] == [4 + 28 * i for i in range(35)]
    gs, hs = layout(GO_LOWSTATE).offsets, layout(HG_LOWSTATE).offsets
    assert [gs[f"motor_state[{i}].q"] for i in range(20)] == [84 + 48 * i for i in range(20)]
    assert [hs[f"motor_state[{i}].q"] for i in range(35)] == [76 + 56 * i for i in range(35)]


def test_pack_puts_values_at_their_offsets():
    rng = random.Random(0)
    msg = plain(u._GO_LOWCMD)
    fill(u._GO_LOWCMD, msg, rng)
    data, off = pack_lowcmd_go(msg), layout(GO_LOWCMD).offsets
    assert struct.unpack_from("<f", data, off["motor_cmd[7].kp"])[0] == msg.motor_cmd[7].kp
    assert struct.unpack_from("<2I", data, off["version"]) == tuple(msg.version)
    assert data[off["wireless_remote"]:][:40] == bytes(msg.wireless_remote)
    assert struct.unpack_from("<I", data, 808)[0] == msg.crc
    hg = plain(u._HG_LOWSTATE)
    fill(u._HG_LOWSTATE, hg, rng)
    data, off = pack_lowstate_hg(hg), layout(HG_LOWSTATE).offsets
    assert struct.unpack_from("<2h", data, off["motor_state[34].temperature"]) == tuple(
        hg.motor_state[34].temperature)
    assert struct.unpack_from("<h", data, off["imu_state.temperature"])[0] == hg.imu_state.temperature


def test_pack_refuses_wrong_lengths_and_unknown_types():
    msg = plain(u._GO_LOWCMD)
    msg.motor_cmd = msg.motor_cmd[:12]  # a Go2 has 12 motors, the message 20
    with pytest.raises(ValueError, match="motor_cmd"):
        pack(msg)
    with pytest.raises(TypeError):
        pack(object())
    with pytest.raises(KeyError):
        pack(SimpleNamespace(__idl_typename__="unitree_go.msg.dds_.SportModeState_"))


# --- CRC --------------------------------------------------------------------------------------


def test_crc_algorithm():
    assert u._crc32_msb_bytes(b"123456789") == 0x0376E6E7  # the CRC-32/MPEG-2 catalogue check value
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 7, 202):
        words = rng.integers(0, 2**32, n, dtype=np.uint32)
        assert crc32_words(words) == reference_crc([int(w) for w in words])
    assert crc32_words(np.zeros(0, np.uint32)) == 0xFFFFFFFF


# Golden CRCs of the all-zero messages, computed by reference_crc (and equal to unitree_sdk2py's
# utils/crc.py for the same messages, checked once outside CI).
GOLDEN_ZERO_CRC = {GO_LOWCMD: 0x4B5A4880, GO_LOWSTATE: 0x85F11EA6, HG_LOWCMD: 0xFE172F9F,
                   HG_LOWSTATE: 0xD64BB04A}


@pytest.mark.parametrize("typename", TYPES)
def test_crc_of_zero_and_random_messages(typename):
    spec = u._SPECS[typename]
    msg = plain(spec)
    assert reference_message_crc(pack(msg)) == GOLDEN_ZERO_CRC[typename]
    assert message_crc(msg) == GOLDEN_ZERO_CRC[typename]
    rng = random.Random(typename)
    for _ in range(5):
        fill(spec, msg, rng)
        assert message_crc(msg) == reference_message_crc(pack(msg))
        assert with_crc(msg) is msg and check_crc(msg)
        before = msg.crc
        msg.crc ^= 0xFFFF  # the crc word is not part of its own CRC
        assert message_crc(msg) == before and not check_crc(msg)


def test_crc_sees_every_field():
    msg = with_crc(plain(u._HG_LOWCMD))
    msg.motor_cmd[34].kd = 0.5
    assert not check_crc(msg)
    msg = with_crc(plain(u._GO_LOWSTATE))
    msg.fan_frequency[3] = 1
    assert not check_crc(msg)


def test_pack_functions_per_type():
    for fn, typename in [(pack_lowcmd_go, GO_LOWCMD), (pack_lowstate_go, GO_LOWSTATE),
                         (pack_lowcmd_hg, HG_LOWCMD), (pack_lowstate_hg, HG_LOWSTATE)]:
        msg = plain(u._SPECS[typename])
        fill(u._SPECS[typename], msg, random.Random(1))
        assert fn(msg) == pack(msg)


def test_crc_and_packing_import_without_cyclonedds():
    code = (
        "import sys; sys.modules['cyclonedds'] = None\n"
        "import numpy as np\n"
        "from simrl.deploy.unitree import crc32_words, pack_lowcmd_go, HAVE_CYCLONEDDS, lowcmd_go\n"
        "import simrl.deploy.unitree as u\n"
        "assert not HAVE_CYCLONEDDS\n"
        "assert crc32_words(np.zeros(0, np.uint32)) == 0xFFFFFFFF\n"
        "for call in (lowcmd_go, lambda: u.GoLowCmd_):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        assert 'cyclonedds' in str(e)\n"
        "    else:\n"
        "        raise AssertionError('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- with cyclonedds: the DDS types ------------------------------------------------------------


@pytest.fixture
def dds():
    pytest.importorskip("cyclonedds")
    from cyclonedds.idl._support import Endianness

    return SimpleNamespace(
        new={GO_LOWCMD: u.lowcmd_go, GO_LOWSTATE: u.lowstate_go, HG_LOWCMD: u.lowcmd_hg,
             HG_LOWSTATE: u.lowstate_hg},
        little=Endianness.Little,
    )


def _field_names(spec: u._Spec) -> list[str]:
    return [name for name, _, _ in spec.fields]


@pytest.mark.parametrize("typename", TYPES)
def test_types_match_the_layout_tables(dds, typename):
    msg = dds.new[typename]()
    assert type(msg).__idl_typename__ == typename

    def walk(spec, obj):
        assert obj.__idl_typename__ == spec.typename
        assert [f.name for f in dataclasses.fields(obj)] == _field_names(spec)
        for name, kind, count in spec.fields:
            if isinstance(kind, u._Spec):
                for item in getattr(obj, name) if count else [getattr(obj, name)]:
                    walk(kind, item)

    walk(u._SPECS[typename], msg)


# XTypes TypeIdentifier hashes (minimal, complete) of unitree_sdk2py's own generated types under
# cyclonedds 11.0.1, checked once outside CI: the same hashes mean the same type definition to DDS.
SDK_TYPE_HASHES = {
    GO_LOWCMD: ("cad4e60020cace3bdcaefadd32ae", "12da99179559f14db8b7ab23acdd"),
    GO_LOWSTATE: ("bea62d31d8e2cf8edbede4dfd6d8", "ef1819d05896c24741d6dbde9167"),
    HG_LOWCMD: ("fa968ef77641602adc6a4d1595e5", "ef636a54656de1d49ca65377b07c"),
    HG_LOWSTATE: ("2d915113389330c54645b3d311cf", "860cfa7cbdcd87fbdb066de53c1d"),
}


@pytest.mark.parametrize("typename", TYPES)
def test_type_identity_is_the_sdk_s(dds, typename):
    info = type(dds.new[typename]()).__idl__.get_type_info()
    hashes = tuple(getattr(info, k).typeid_with_size.type_id.value.hex() for k in ("minimal", "complete"))
    assert hashes == SDK_TYPE_HASHES[typename]


def test_default_constructors_are_the_sdk_s(dds):
    go = dds.new[GO_LOWCMD]()
    assert go.head == [0, 0] and go.level_flag == 0 and go.gpio == 0  # default.py: all zero
    assert len(go.motor_cmd) == 20 and go.motor_cmd[0] is not go.motor_cmd[1]
    assert len(dds.new[HG_LOWCMD]().motor_cmd) == 35
    assert len(dds.new[GO_LOWSTATE]().motor_state) == 20 and len(dds.new[HG_LOWSTATE]().motor_state) == 35
    for typename, new in dds.new.items():
        msg = new()
        assert pack(msg) == pack(plain(u._SPECS[typename]))
        assert message_crc(msg) == GOLDEN_ZERO_CRC[typename]


def test_golden_crc_of_commands(dds):
    # The Go2 low-level example's first command (head FE EF, level_flag FF, every motor mode 1 with
    # q = PosStopF, dq = VelStopF, gains and torque 0), and a G1 command; values by reference_crc,
    # equal to unitree_sdk2py's crc.py (checked once outside CI).
    go = dds.new[GO_LOWCMD]()
    go.head, go.level_flag = list(u.GO_HEAD), u.GO_LEVEL_FLAG_LOW
    for m in go.motor_cmd:
        m.mode, m.q, m.dq = 0x01, u.POS_STOP_F, u.VEL_STOP_F
    assert reference_message_crc(pack(go)) == 0x06E577CD
    assert with_crc(go).crc == 0x06E577CD
    hg = dds.new[HG_LOWCMD]()
    hg.mode_machine = 5
    for i, m in enumerate(hg.motor_cmd[:29]):
        m.mode, m.q, m.kp, m.kd = 1, 0.1 * i - 1.0, 60.0, 1.5
    assert reference_message_crc(pack(hg)) == 0x8845871B
    assert with_crc(hg).crc == 0x8845871B


@pytest.mark.parametrize("typename", TYPES)
def test_cdr_wire_bytes(dds, typename):
    spec, msg = u._SPECS[typename], dds.new[typename]()
    fill(spec, msg, random.Random(typename))
    with_crc(msg)
    wire = msg.serialize(endianness=dds.little)
    assert wire[:4] == b"\x00\x01\x00\x00"  # encapsulation: CDR (XCDR1), little-endian, no options
    body = wire[4:]
    # The body is the CDR packing, not the C struct: same values, other padding (see CDR_OFFSETS).
    assert body == pack(msg, cdr=True)
    c_struct = pack(msg)
    assert len(body) == len(c_struct) - 4 and body != c_struct
    assert layout(typename, cdr=True).struct.unpack(body) == layout(typename).struct.unpack(c_struct)
    # So the crc can't be taken over the wire bytes; it is over the C struct the robot rebuilds.
    assert struct.unpack_from("<I", body, len(body) - 4)[0] == msg.crc == reference_message_crc(c_struct)


def normalized(value):
    """Fields as nested dicts and lists (uint8 arrays come back from cyclonedds as bytes)."""
    if dataclasses.is_dataclass(value):
        return {f.name: normalized(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple, bytes)):
        return [normalized(v) for v in value]
    return value


@pytest.mark.parametrize("typename", TYPES)
def test_round_trip(dds, typename):
    spec, msg = u._SPECS[typename], dds.new[typename]()
    fill(spec, msg, random.Random(f"rt {typename}"))
    with_crc(msg)
    back = type(msg).deserialize(msg.serialize())
    assert normalized(back) == normalized(msg)
    assert pack(back) == pack(msg) and check_crc(back)
    if typename == GO_LOWCMD:  # uint8[n] is read back as (immutable) bytes, the rest as lists
        assert isinstance(back.head, bytes) and isinstance(back.sn, list)
