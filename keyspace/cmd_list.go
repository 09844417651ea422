package keyspace

// listSpecs are the list commands.
var listSpecs = []*CommandSpec{}
