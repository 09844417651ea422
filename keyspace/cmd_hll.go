package keyspace

// hllSpecs are the HyperLogLog commands.
var hllSpecs = []*CommandSpec{}
