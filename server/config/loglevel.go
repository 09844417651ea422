package config

import "log/slog"

// LogNothing is the level of `loglevel nothing`: above every record moond
// writes.
const LogNothing = slog.LevelError + 4

// SlogLevel is the slog level of a Redis loglevel name: debug and verbose
// log everything, notice is Info, warning is Warn, nothing is silence.
func SlogLevel(name string) slog.Level {
	switch name {
	case "debug", "verbose":
		return slog.LevelDebug
	case "warning":
		return slog.LevelWarn
	case "nothing":
		return LogNothing
	}
	return slog.LevelInfo
}
