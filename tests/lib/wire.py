"""Protobuf's wire format written by hand, for the scripts that send bytes the stubs
would not make (tests/abuse/abuse.py, tests/abuse/hold.py)."""


def varint(value):
    """`value` (not negative) as a base-128 varint."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, wire_type, payload):
    """One protobuf field: its key, then the payload (a length prefix added for wire
    type 2)."""
    if wire_type == 2:
        payload = varint(len(payload)) + payload
    return varint(number << 3 | wire_type) + payload
