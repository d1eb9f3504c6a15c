"""Printing floating-point values exactly as MLIR does.

MLIR prints a float in 7-significant-digit exponential form (`1.000000e+00`)
when that text parses back to the same bits in the value's own type, and
otherwise in LLVM APFloat's default form with just enough digits for the
type; infinities and NaNs are printed as the hex bit pattern (`0x7FC00000`).
FileCheck lines in upstream tests depend on these exact spellings.
"""

from __future__ import annotations

import math
import struct

_BITS_FORMAT = {"f16": ("e", "H"), "f32": ("f", "I"), "f64": ("d", "Q")}
# struct rounds to nearest-even as a C cast does (and as numpy's float32/float16 do), with no numpy import.
_ROUNDING = {"f32": struct.Struct("<f"), "f16": struct.Struct("<e")}


def round_to(value: float, type_name: str) -> float:
    """`value` rounded to the nearest value of the named float type."""
    if type_name == "f64" or math.isnan(value) or math.isinf(value):
        return value
    packer = _ROUNDING.get(type_name)
    if packer is not None:
        try:
            return packer.unpack(packer.pack(value))[0]
        except OverflowError:  # rounds past the largest finite value of the type
            return math.copysign(math.inf, value)
    if type_name == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", round_to(value, "f32")))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return value


def bits_of(value: float, type_name: str) -> int:
    """The IEEE bit pattern of `value` in the named type."""
    if type_name == "bf16":
        return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    fmt, ifmt = _BITS_FORMAT.get(type_name, ("d", "Q"))
    return struct.unpack("<" + ifmt, struct.pack("<" + fmt, value))[0]


def from_bits(bits: int, type_name: str) -> float:
    """The float whose bit pattern in the named type is `bits`."""
    if type_name == "bf16":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    fmt, ifmt = _BITS_FORMAT.get(type_name, ("d", "Q"))
    return struct.unpack("<" + fmt, struct.pack("<" + ifmt, bits))[0]


_PRECISION_BITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53, "tf32": 11}


def _digits(value: float, precision: int) -> tuple[str, int]:
    """Decimal digits of |value| as LLVM's APFloat::toString computes them,
    and the power of ten of the last digit.

    APFloat first drops whole decimal digits from the exact binary-to-decimal
    significand by an estimate based on its bit length (a truncation), then
    rounds half-up on the one digit below the kept precision.  This double
    rounding decides between `9.002660e-01` and `0.900265991`, so it is
    reproduced exactly rather than rounding the exact decimal value."""
    num, den = abs(value).as_integer_ratio()
    if num == 0:
        return "0", 0
    exp2 = -(den.bit_length() - 1)
    while not num & 1:  # trailing binary zeros carry no digits
        num >>= 1
        exp2 += 1
    if exp2 >= 0:
        sig, exp10 = num << exp2, 0
    else:
        sig, exp10 = num * 5 ** -exp2, exp2
    bits_required = (precision * 196 + 58) // 59
    bits = sig.bit_length()
    if bits > bits_required:
        removable = (bits - bits_required) * 59 // 196
        if removable:
            exp10 += removable
            sig //= 10 ** removable
    text = str(sig)
    stripped = text.rstrip("0")
    exp10 += len(text) - len(stripped)
    digits = stripped
    n = len(digits)
    if n > precision:
        first = n - precision  # digits dropped from the right
        if digits[n - first] < "5":
            kept = digits[:n - first].rstrip("0")
            exp10 += n - len(kept)
            return kept, exp10
        kept = list(digits[:n - first])
        i = len(kept) - 1
        while i >= 0 and kept[i] == "9":
            i -= 1
        if i < 0:
            return "1", exp10 + n
        kept[i] = chr(ord(kept[i]) + 1)
        kept_text = "".join(kept[:i + 1])
        exp10 += n - len(kept_text)
        return kept_text, exp10
    return digits, exp10


def _default_digits(type_name: str) -> int:
    return 2 + _PRECISION_BITS.get(type_name, 53) * 59 // 196


def _exponential(value: float) -> str:
    """APFloat's toString(6, 0, false): `d.dddddde+XX`."""
    digits, exp = _digits(value, 6)
    exp10 = exp + len(digits) - 1
    mantissa = digits[0] + "." + digits[1:].ljust(6, "0")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    return f"{sign}{mantissa}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"


def _default(value: float, type_name: str) -> str:
    """APFloat's toString() with the type's natural precision and padding 3."""
    precision = _default_digits(type_name)
    digits, exp = _digits(value, precision)
    n = len(digits)
    sign = "-" if value < 0 else ""
    if exp >= 0:
        scientific = exp > 3 or n + exp > precision
    else:
        msd = exp + n - 1
        scientific = msd < 0 and -msd > 3
    if scientific:
        exp10 = exp + n - 1
        # APFloat pads the exponent to two digits only when keeping zeros.
        return f"{sign}{digits[0]}.{digits[1:] or '0'}E{'+' if exp10 >= 0 else '-'}{abs(exp10)}"
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + n
    if whole > 0:
        return f"{sign}{digits[:whole]}.{digits[whole:]}"
    return f"{sign}0.{'0' * -whole}{digits}"


def format_float(value: float, type_name: str = "f64") -> str:
    """Render a float value of the named MLIR type as MLIR's printer does."""
    if not (math.isnan(value) or math.isinf(value)):
        text = _exponential(value)
        if bits_of(round_to(float(text), type_name), type_name) == bits_of(value, type_name):
            return text
        text = _default(value, type_name)
        if "." in text:
            return text
    return hex_float(value, type_name)


def hex_float(value: float, type_name: str) -> str:
    return f"0x{bits_of(value, type_name):X}"
