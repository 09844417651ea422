package keyspace

// hashSpecs are the hash commands.
var hashSpecs = []*CommandSpec{}
