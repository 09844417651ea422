package server

import (
	_ "embed"
	"errors"
	"fmt"
	"strconv"
)

// The command documentation, command tips and key specs of every command
// and subcommand moond has are Redis's, as redis-server 7.0.15 answers
// COMMAND DOCS and COMMAND INFO (Copyright (c) 2006-2022, Redis Ltd. and
// contributors, BSD-3-Clause: https://github.com/redis/redis/blob/7.0/COPYING).
// internal/cmddocgen records them in command_docs.resp3 as RESP3 replies:
// a simple string naming their source, then three maps from a command's
// full name ("get", "config|get") to its docs (less its subcommands), its
// tips and its key specs; the last two only where Redis has some.

//go:embed command_docs.resp3
var commandDocsData []byte

// The tables, read from commandDocsData when the package loads.
var commandDocs, commandTips, commandKeySpecs = mustLoadCommandDocs(commandDocsData)

// mustLoadCommandDocs reads the three tables; the data is part of the
// binary, so an error is a build that cannot work.
func mustLoadCommandDocs(b []byte) (docs, tips, specs map[string]replyValue) {
	tables, err := loadCommandDocs(b)
	if err != nil {
		panic("server: command_docs.resp3: " + err.Error())
	}
	return tables[0], tables[1], tables[2]
}

// loadCommandDocs parses the source line and the three maps of b.
func loadCommandDocs(b []byte) ([3]map[string]replyValue, error) {
	var tables [3]map[string]replyValue
	src, b, err := parseReplyValue(b)
	if err != nil || src.kind != '+' {
		return tables, fmt.Errorf("no source line: %v", err)
	}
	for i := range tables {
		var m replyValue
		if m, b, err = parseReplyValue(b); err != nil {
			return tables, fmt.Errorf("table %d: %w", i, err)
		}
		if m.kind != '%' {
			return tables, fmt.Errorf("table %d is no map", i)
		}
		tables[i] = make(map[string]replyValue, len(m.elems)/2)
		for j := 0; j+1 < len(m.elems); j += 2 {
			tables[i][m.elems[j].str] = m.elems[j+1]
		}
	}
	if len(b) != 0 {
		return tables, errors.New("bytes after the last table")
	}
	return tables, nil
}

// parseReplyValue parses one RESP3 reply of the kinds replyValue keeps
// from the front of b and returns it and the rest of b.
func parseReplyValue(b []byte) (replyValue, []byte, error) {
	i := 0
	for i+1 < len(b) && (b[i] != '\r' || b[i+1] != '\n') {
		i++
	}
	if i+1 >= len(b) || i == 0 {
		return replyValue{}, nil, errors.New("a truncated reply line")
	}
	kind, line, rest := b[0], string(b[1:i]), b[i+2:]
	switch kind {
	case '+':
		return replyValue{kind: kind, str: line}, rest, nil
	case ':':
		n, err := strconv.ParseInt(line, 10, 64)
		return replyValue{kind: kind, num: n}, rest, err
	case '$':
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 || n+2 > len(rest) {
			return replyValue{}, nil, fmt.Errorf("a bad bulk string of length %q", line)
		}
		return replyValue{kind: kind, str: string(rest[:n])}, rest[n+2:], nil
	case '*', '%', '~':
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 {
			return replyValue{}, nil, fmt.Errorf("a bad aggregate length %q", line)
		}
		if kind == '%' {
			n *= 2
		}
		v := replyValue{kind: kind, elems: make([]replyValue, n)}
		for j := range v.elems {
			if v.elems[j], rest, err = parseReplyValue(rest); err != nil {
				return replyValue{}, nil, err
			}
		}
		return v, rest, nil
	}
	return replyValue{}, nil, fmt.Errorf("an unexpected reply type %q", kind)
}
