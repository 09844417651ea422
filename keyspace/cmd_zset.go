package keyspace

// zsetSpecs are the sorted-set commands.
var zsetSpecs = []*CommandSpec{}
