// Package config holds moond's configuration: one registry of parameters
// named like redis.conf directives (plus moond's own), shared by the command
// line flags, the redis.conf-style config file and CONFIG GET/SET, so that a
// name means the same thing in all three places.
package config
