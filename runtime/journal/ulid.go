package journal

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// crockfordValue maps a byte to its Crockford digit (either case), 0xff
// for a byte that is none: a journal listing parses every event file's
// name, which the stop hook does at every turn.
var crockfordValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = byte(i)
		t[crockford[i]|0x20] = byte(i) // lower case (digits map to themselves)
	}
	return t
}()

// ULID is a 128-bit id: 48 bits of Unix milliseconds, 80 random bits, in
// Crockford base32 (26 characters). Ids from one process are strictly
// increasing, as the SDK's monotonic factory makes them.
type ULID [16]byte

func (u ULID) String() string {
	var out [26]byte
	// 130 bits of output for 128 bits of input: the first char holds 3 bits.
	hi := binary.BigEndian.Uint64(u[:8])
	lo := binary.BigEndian.Uint64(u[8:])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ParseULID reads a ULID string; ok is false when s is not one.
func ParseULID(s string) (ULID, bool) {
	var u ULID
	if len(s) != 26 || s[0] > '7' {
		return u, false
	}
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		v := crockfordValue[s[i]]
		if v == 0xff {
			return u, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	binary.BigEndian.PutUint64(u[:8], hi)
	binary.BigEndian.PutUint64(u[8:], lo)
	return u, true
}

var (
	ulidMu   sync.Mutex
	lastULID ULID
)

// NewULID returns a fresh id, greater than every id this process made
// before and greater than after (when after is a ULID).
func NewULID(after string) string {
	ulidMu.Lock()
	defer ulidMu.Unlock()
	var u ULID
	ms := uint64(time.Now().UnixMilli())
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	// math/rand/v2's generator is seeded from the OS per process; ids need
	// uniqueness, not secrecy, and crypto/rand would cost every hook call
	// its init (see runtime/cmd/hookbench).
	binary.BigEndian.PutUint64(u[6:14], rand.Uint64())
	binary.BigEndian.PutUint16(u[14:], uint16(rand.Uint32()))
	floor := lastULID
	if a, ok := ParseULID(after); ok && less(floor, a) {
		floor = a
	}
	if !less(floor, u) {
		u = floor
		increment(&u)
	}
	lastULID = u
	return u.String()
}

func less(a, b ULID) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func increment(u *ULID) {
	for i := 15; i >= 6; i-- {
		u[i]++
		if u[i] != 0 {
			return
		}
	}
}
