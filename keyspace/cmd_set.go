package keyspace

// setSpecs are the set commands.
var setSpecs = []*CommandSpec{}
