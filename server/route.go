package server

// SlotCount is the number of hash slots keys map to, as in Redis Cluster.
const SlotCount = 16384

// crc16tab is CRC16-CCITT (XMODEM: polynomial 0x1021, init 0), the checksum
// Redis Cluster uses for key slots; built once at start-up.
var crc16tab = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

func crc16(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc = crc<<8 ^ crc16tab[byte(crc>>8)^c]
	}
	return crc
}

// KeySlot maps a key to its slot: CRC16 of the key, or of the part between
// the first '{' and the next '}' when that part is not empty (a hash tag),
// modulo 16384.
func KeySlot(key []byte) int {
	for i, c := range key {
		if c == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return int(crc16(key) & (SlotCount - 1))
				}
			}
			break
		}
	}
	return int(crc16(key) & (SlotCount - 1))
}

// shardOfSlot maps slots to shards in contiguous ranges, like a cluster
// whose nodes each own one range.
func shardOfSlot(slot, shards int) int { return slot * shards / SlotCount }
