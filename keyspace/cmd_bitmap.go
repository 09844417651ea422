package keyspace

// bitmapSpecs are the bitmap commands on strings.
var bitmapSpecs = []*CommandSpec{}
