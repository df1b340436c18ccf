#!/usr/bin/env python3
"""A minimal ductile wire client, for tests that speak the protocol by hand
(tests/integration/test_relay_eof.sh, tests/review/*.sh).

  Unix socket (no MAC, the kernel names us):   c = Conn.unix(path)
  TCP with the cluster key (a node daemon):    c = Conn.tcp(host, port, keyfile)
  c.send(obj) / c.send_raw(bytes) / c.recv(timeout) -> dict or None (closed/timeout)

Framing (src/proto/proto.h): magic "DCT1", u32 length, u64 seq, 32-byte
HMAC-SHA256(key, nonce | sender role | first 16 header bytes | payload); big-endian.
"""
import hashlib, hmac, json, select, socket, struct, sys

MAGIC = 0x44435431
CLIENT, SERVER = 1, 2


class Conn:
    def __init__(self, sock, key=None):
        self.s = sock
        self.key = key
        self.nonce = None
        self.sent = 0
        self.received = 0
        self.buf = b""

    @classmethod
    def unix(cls, path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return cls(s)

    @classmethod
    def tcp(cls, host, port, keyfile=None, auth=True):
        s = socket.create_connection((host, port))
        key = bytes.fromhex(open(keyfile).read().strip()) if keyfile else None
        c = cls(s, key)
        hello = c._frame(5)
        if hello is None:
            raise RuntimeError("no hello")
        c.nonce = bytes.fromhex(hello["nonce"])
        if key and auth:
            c.send({"type": "auth"})
        return c

    def _mac(self, role, hdr16, payload):
        h = hmac.new(self.key, digestmod=hashlib.sha256)
        h.update(self.nonce)
        h.update(bytes([role]))
        h.update(hdr16)
        h.update(payload)
        return h.digest()

    def frame_bytes(self, payload, seq=None, badmac=False):
        seq = self.sent + 1 if seq is None else seq
        hdr16 = struct.pack(">IIQ", MAGIC, len(payload), seq)
        if self.key and self.nonce:
            m = self._mac(CLIENT, hdr16, payload)
            if badmac:
                m = bytes(32)
        else:
            m = bytes(32)
        return hdr16 + m + payload

    def send_raw(self, payload, **kw):
        self.s.sendall(self.frame_bytes(payload, **kw))
        self.sent += 1

    def send(self, obj):
        self.send_raw(json.dumps(obj, separators=(",", ":")).encode())

    def _frame(self, timeout):
        while True:
            if len(self.buf) >= 48:
                n = struct.unpack(">I", self.buf[4:8])[0]
                if len(self.buf) >= 48 + n:
                    p = self.buf[48:48 + n]
                    self.buf = self.buf[48 + n:]
                    return json.loads(p)
            r, _, _ = select.select([self.s], [], [], timeout)
            if not r:
                return None
            d = self.s.recv(1 << 20)
            if not d:
                return None
            self.buf += d

    def recv(self, timeout=5):
        return self._frame(timeout)

    def close(self):
        self.s.close()
