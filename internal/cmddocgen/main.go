// Command cmddocgen writes server/command_docs.resp3: the COMMAND DOCS
// entries, command tips and key specs of every command and subcommand
// moond has, as a redis-server 7.0 answers them, so that moond's COMMAND
// DOCS and COMMAND INFO answer the same (server/command_docs_data.go
// embeds and reads the file). It is run by hand, against a running
// redis-server of the version moond follows, after a command is added:
//
//	redis-server --port 6399 --save '' &
//	go run ./internal/cmddocgen -redis 127.0.0.1:6399 -o server/command_docs.resp3
//
// The data it writes is Redis's command documentation (BSD-3-Clause,
// Redis Ltd.), which the file's first line says.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"

	"github.com/moond-db/moond/server"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "address of a redis-server 7.0")
	out := flag.String("o", "server/command_docs.resp3", "the file to write")
	flag.Parse()
	if err := run(*addr, *out); err != nil {
		fmt.Fprintln(os.Stderr, "cmddocgen:", err)
		os.Exit(1)
	}
}

// tables is what the generated file holds, keyed by full command name
// ("get", "config|get").
type tables struct {
	version string
	docs    map[string]value // COMMAND DOCS entries less their subcommands
	tips    map[string]value // COMMAND INFO's 8th element
	specs   map[string]value // COMMAND INFO's 9th element
}

func run(addr, out string) error {
	t, err := fetch(addr)
	if err != nil {
		return err
	}
	var missing []string
	for _, name := range server.CommandNames() {
		if _, ok := t.docs[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("redis-server documents no %s", strings.Join(missing, ", "))
	}
	src := t.render(server.CommandNames())
	if err := os.WriteFile(out, src, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// fetch asks the redis-server at addr, in RESP3, for its version and for
// COMMAND DOCS and COMMAND INFO of every command.
func fetch(addr string) (*tables, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to redis-server: %w", err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	ask := func(cmd string) (value, error) {
		if _, err := fmt.Fprintf(conn, "%s\r\n", cmd); err != nil {
			return value{}, fmt.Errorf("send %s: %w", cmd, err)
		}
		return readValue(r)
	}
	hello, err := ask("HELLO 3")
	if err != nil {
		return nil, err
	}
	version, _ := hello.field("version")
	docs, err := ask("COMMAND DOCS")
	if err != nil {
		return nil, err
	}
	info, err := ask("COMMAND INFO")
	if err != nil {
		return nil, err
	}
	t := &tables{version: version.str, docs: map[string]value{}, tips: map[string]value{}, specs: map[string]value{}}
	t.addDocs(docs)
	t.addInfo(info)
	return t, nil
}

// addDocs records a COMMAND DOCS map, its subcommands under their full
// names.
func (t *tables) addDocs(docs value) {
	for i := 0; i+1 < len(docs.elems); i += 2 {
		name, doc := docs.elems[i].str, docs.elems[i+1]
		t.docs[name] = doc.without("subcommands")
		if subs, ok := doc.field("subcommands"); ok {
			t.addDocs(subs)
		}
	}
}

// addInfo records the tips and key specs of COMMAND INFO entries and of
// their subcommands.
func (t *tables) addInfo(entries value) {
	for _, e := range entries.elems {
		if len(e.elems) < 10 {
			continue
		}
		name := e.elems[0].str
		t.tips[name], t.specs[name] = e.elems[7], e.elems[8]
		t.addInfo(e.elems[9])
	}
}

// render writes the file: a simple string naming the data's source and
// license, then the three tables as RESP3 maps of the entries for names,
// sorted (tips and key specs only where Redis has some: moond answers an
// empty set for the others).
func (t *tables) render(names []string) []byte {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	b := fmt.Appendf(nil, "+redis-server %s COMMAND DOCS and COMMAND INFO, by internal/cmddocgen; "+
		"Copyright (c) 2006-2022, Redis Ltd. and contributors, BSD-3-Clause\r\n", t.version)
	for i, m := range []map[string]value{t.docs, t.tips, t.specs} {
		var kept []string
		for _, name := range sorted {
			if v := m[name]; i == 0 || v.kind == '%' || len(v.elems) > 0 {
				kept = append(kept, name)
			}
		}
		b = fmt.Appendf(b, "%%%d\r\n", len(kept))
		for _, name := range kept {
			b = appendValue(appendValue(b, value{kind: '$', str: name}), m[name])
		}
	}
	return b
}

// appendValue appends v in RESP3.
func appendValue(b []byte, v value) []byte {
	switch v.kind {
	case '$':
		return fmt.Appendf(b, "$%d\r\n%s\r\n", len(v.str), v.str)
	case '+':
		return fmt.Appendf(b, "+%s\r\n", v.str)
	case ':':
		return fmt.Appendf(b, ":%d\r\n", v.num)
	}
	kind, n := v.kind, len(v.elems)
	if kind == 0 || kind == '_' {
		kind = '*'
	}
	if kind == '%' {
		n /= 2
	}
	b = fmt.Appendf(b, "%c%d\r\n", kind, n)
	for _, e := range v.elems {
		b = appendValue(b, e)
	}
	return b
}
