package crfsuite

import "math/bits"

// hashLittle is Bob Jenkins' lookup3 hash of key ("hashlittle"), with
// which CRFsuite's string databases (CQDB) pick a key's hash table and
// bucket. It reads key in 12-byte blocks of three little-endian words; the
// last block, 1 to 12 bytes, is zero-padded.
func hashLittle(key []byte, initval uint32) uint32 {
	a := 0xdeadbeef + uint32(len(key)) + initval
	b, c := a, a
	for len(key) > 12 {
		a += le32(key[0:4])
		b += le32(key[4:8])
		c += le32(key[8:12])
		a, b, c = mix(a, b, c)
		key = key[12:]
	}
	if len(key) == 0 {
		return c
	}
	var last [12]byte
	copy(last[:], key)
	a += le32(last[0:4])
	b += le32(last[4:8])
	c += le32(last[8:12])
	_, _, c = final(a, b, c)
	return c
}

func le32(p []byte) uint32 {
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

func rot(x uint32, k int) uint32 { return bits.RotateLeft32(x, k) }

// mix is lookup3's reversible mixing of three words.
func mix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= rot(c, 4)
	c += b
	b -= a
	b ^= rot(a, 6)
	a += c
	c -= b
	c ^= rot(b, 8)
	b += a
	a -= c
	a ^= rot(c, 16)
	c += b
	b -= a
	b ^= rot(a, 19)
	a += c
	c -= b
	c ^= rot(b, 4)
	b += a
	return a, b, c
}

// final is lookup3's final mixing of three words into c.
func final(a, b, c uint32) (uint32, uint32, uint32) {
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return a, b, c
}
