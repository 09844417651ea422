package config

import (
	"strconv"
	"strings"
	"time"
)

// Client classes of client-output-buffer-limit, in the order CONFIG GET
// shows them.
const (
	ClassNormal = iota
	ClassReplica
	ClassPubSub
	numClasses
)

var classNames = [numClasses]string{"normal", "slave", "pubsub"}

// OutputBufferLimit is one class's client-output-buffer-limit: a client
// whose pending output reaches Hard bytes is closed at once; one whose
// output stays at Soft bytes or more for longer than SoftFor is closed
// too. Zero turns a limit off.
type OutputBufferLimit struct {
	Hard, Soft int64
	SoftFor    time.Duration
}

// defaultOutputBufferLimits are Redis's defaults.
var defaultOutputBufferLimits = [numClasses]OutputBufferLimit{
	ClassReplica: {Hard: 256 << 20, Soft: 64 << 20, SoftFor: 60 * time.Second},
	ClassPubSub:  {Hard: 32 << 20, Soft: 8 << 20, SoftFor: 60 * time.Second},
}

func outputBufferLimitParam() *Param {
	return &Param{Name: "client-output-buffer-limit", Mutable: true,
		Get: func(c *Config) string {
			var b strings.Builder
			for i, l := range c.OutputBufferLimits {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(classNames[i] + " " + strconv.FormatInt(l.Hard, 10) + " " +
					strconv.FormatInt(l.Soft, 10) + " " + strconv.FormatInt(int64(l.SoftFor/time.Second), 10))
			}
			return b.String()
		},
		Set: func(c *Config, v string) error {
			limits, err := parseOutputBufferLimits(c.OutputBufferLimits, v)
			if err != nil {
				return err
			}
			c.OutputBufferLimits = limits
			return nil
		}}
}

// parseOutputBufferLimits applies "<class> <hard> <soft> <seconds> ..."
// to cur, as Redis does: only the classes named change, and nothing does
// when any group is wrong.
func parseOutputBufferLimits(cur [numClasses]OutputBufferLimit, v string) ([numClasses]OutputBufferLimit, error) {
	f := strings.Fields(v)
	if len(f)%4 != 0 {
		return cur, redisError("Wrong number of arguments in buffer limit configuration.")
	}
	for i := 0; i < len(f); i += 4 {
		class := -1
		switch strings.ToLower(f[i]) {
		case "normal":
			class = ClassNormal
		case "slave", "replica":
			class = ClassReplica
		case "pubsub":
			class = ClassPubSub
		default:
			return cur, redisError("Invalid client class specified in buffer limit configuration.")
		}
		hard, err1 := ParseMemory(f[i+1])
		soft, err2 := ParseMemory(f[i+2])
		secs, err3 := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 || secs > 1<<31 {
			return cur, redisError("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		cur[class] = OutputBufferLimit{Hard: hard, Soft: soft, SoftFor: time.Duration(secs) * time.Second}
	}
	return cur, nil
}

// redisError is an error in Redis's words (capitalized, with a full stop:
// CONFIG SET shows them as they are): client-output-buffer-limit's and
// notify-keyspace-events'.
type redisError string

func (e redisError) Error() string { return string(e) }
