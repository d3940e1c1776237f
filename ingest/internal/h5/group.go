package h5

import (
	"encoding/binary"
	"fmt"
	"path"
	"sort"
)

// More object header message types: those of groups and attributes.
const (
	msgLinkInfo    = 0x0002
	msgGroupInfo   = 0x000A
	msgLink        = 0x0006
	msgAttribute   = 0x000C
	msgSymbolTable = 0x0011
	msgAttrInfo    = 0x0015
)

// link is one named member of a group: a hard link to the object header
// at addr. Soft and external links are not followed.
type link struct {
	name string
	addr uint64
}

// object is an object of the file: its header messages and, for a group,
// its members sorted by name.
type object struct {
	msgs  []message
	group bool
	links []link
}

// has reports whether the object's header holds a message of type typ.
func (o *object) has(typ uint16) bool {
	for _, m := range o.msgs {
		if m.typ == typ {
			return true
		}
	}
	return false
}

// isGroup reports whether the header describes a group: old style (a
// symbol table) or new style (links, link info or group info).
func (o *object) isGroup() bool {
	return !o.has(msgLayout) &&
		(o.has(msgSymbolTable) || o.has(msgLinkInfo) || o.has(msgLink) || o.has(msgGroupInfo))
}

// loadTree reads every object reachable from the root group, so that a
// corrupted group is an error at Open and lookups need no I/O. Groups may
// link to one another in cycles; each object is read once.
func (f *File) loadTree(root uint64) error {
	f.objs = map[uint64]*object{}
	type item struct {
		addr uint64
		path string // the first path found to the object, for errors
	}
	queue := []item{{root, "/"}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if _, ok := f.objs[it.addr]; ok {
			continue
		}
		// An object header takes at least 16 bytes: more objects than
		// that allows are headers read into one another.
		if uint64(len(f.objs)) > f.m.size/16 {
			return fmt.Errorf("%w: more objects than the file can hold", errFormat)
		}
		msgs, err := f.m.objectHeader(it.addr)
		if err != nil {
			return fmt.Errorf("%s: %w", it.path, err)
		}
		o := &object{msgs: msgs}
		f.objs[it.addr] = o
		if o.group = o.isGroup(); !o.group {
			continue
		}
		if o.links, err = f.m.groupLinks(msgs); err != nil {
			return fmt.Errorf("group %s: %w", it.path, err)
		}
		for _, l := range o.links {
			queue = append(queue, item{l.addr, path.Join(it.path, l.name)})
		}
	}
	return nil
}

// groupLinks lists a group's hard links, sorted by name, from its header
// messages: a symbol table, link messages, or dense storage (a fractal
// heap of link messages indexed by a v2 B-tree of names).
func (m *meta) groupLinks(msgs []message) ([]link, error) {
	var links []link
	for _, msg := range msgs {
		switch msg.typ {
		case msgSymbolTable:
			if len(msg.data) < 2*m.offsetSize {
				return nil, fmt.Errorf("%w: short symbol table message", errFormat)
			}
			ls, err := m.symbolTableLinks(leUint(msg.data, m.offsetSize), leUint(msg.data[m.offsetSize:], m.offsetSize))
			if err != nil {
				return nil, err
			}
			links = append(links, ls...)
		case msgLink:
			l, hard, err := parseLink(msg.data, m.offsetSize)
			if err != nil {
				return nil, err
			}
			if hard {
				links = append(links, l)
			}
		case msgLinkInfo:
			ls, err := m.denseLinks(msg.data)
			if err != nil {
				return nil, err
			}
			links = append(links, ls...)
		}
	}
	sort.SliceStable(links, func(i, j int) bool { return links[i].name < links[j].name })
	return links, nil
}

// parseLink decodes a link message (spec IV.A.2.g); hard is false for a
// soft or external link, whose target is not an address.
func parseLink(b []byte, os int) (l link, hard bool, err error) {
	short := fmt.Errorf("%w: link message truncated", errFormat)
	if len(b) < 2 || b[0] != 1 {
		return link{}, false, fmt.Errorf("%w: link message version", errFormat)
	}
	flags := b[1]
	p := 2
	typ := byte(0)
	if flags&0x08 != 0 {
		if p >= len(b) {
			return link{}, false, short
		}
		typ = b[p]
		p++
	}
	if flags&0x04 != 0 { // creation order
		p += 8
	}
	if flags&0x10 != 0 { // character set
		p++
	}
	w := 1 << (flags & 3)
	if p+w > len(b) {
		return link{}, false, short
	}
	n := leUint(b[p:], w)
	p += w
	if n > uint64(len(b)-p) {
		return link{}, false, short
	}
	l.name = string(b[p : p+int(n)])
	p += int(n)
	if typ != 0 {
		return l, false, nil
	}
	if p+os > len(b) {
		return link{}, false, short
	}
	l.addr = leUint(b[p:], os)
	return l, true, nil
}

// denseLinks reads the links of a group in dense storage, described by its
// link info message.
func (m *meta) denseLinks(b []byte) ([]link, error) {
	heapAddr, btreeAddr, err := m.denseInfo(b, 8)
	if err != nil || undefinedAddr(heapAddr, m.offsetSize) {
		return nil, err // no link yet
	}
	objs, err := m.denseObjects(heapAddr, btreeAddr, btree2LinkName, 4)
	if err != nil {
		return nil, fmt.Errorf("dense links: %w", err)
	}
	var links []link
	for _, o := range objs {
		l, hard, err := parseLink(o, m.offsetSize)
		if err != nil {
			return nil, err
		}
		if hard {
			links = append(links, l)
		}
	}
	return links, nil
}

// denseInfo decodes the fractal heap and name index addresses of a link
// info or attribute info message, whose maximum creation index, present
// when flag bit 0 is set, takes orderBytes.
func (m *meta) denseInfo(b []byte, orderBytes int) (heap, btree uint64, err error) {
	if len(b) < 2 || b[0] != 0 {
		return 0, 0, fmt.Errorf("%w: link or attribute info message version", errFormat)
	}
	p := 2
	if b[1]&1 != 0 {
		p += orderBytes
	}
	if p+2*m.offsetSize > len(b) {
		return 0, 0, fmt.Errorf("%w: link or attribute info message truncated", errFormat)
	}
	return leUint(b[p:], m.offsetSize), leUint(b[p+m.offsetSize:], m.offsetSize), nil
}

// denseObjects returns the heap objects that the name index at btreeAddr
// (records of type typ, the heap ID at byte idAt) lists in the fractal heap
// at heapAddr.
func (m *meta) denseObjects(heapAddr, btreeAddr uint64, typ byte, idAt int) ([][]byte, error) {
	h, err := m.fractalHeap(heapAddr)
	if err != nil {
		return nil, err
	}
	recs, err := m.btree2Records(btreeAddr, typ)
	if err != nil {
		return nil, err
	}
	objs := make([][]byte, 0, len(recs))
	for _, r := range recs {
		// The ID's width is the record's (libhdf5 stores 7-byte IDs for
		// links, 8-byte ones for attributes), which some writers do not
		// give in the heap's header.
		idLen := 7
		if typ == btree2AttrName {
			idLen = 8
		}
		if idAt+idLen > len(r) {
			return nil, fmt.Errorf("%w: v2 B-tree record of %d bytes", errFormat, len(r))
		}
		o, err := h.object(r[idAt : idAt+idLen])
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// attributeMessages returns the attribute messages of an object: those in
// its header and those in dense storage.
func (m *meta) attributeMessages(msgs []message) ([][]byte, error) {
	var out [][]byte
	for _, msg := range msgs {
		switch msg.typ {
		case msgAttribute:
			out = append(out, msg.data)
		case msgAttrInfo:
			heapAddr, btreeAddr, err := m.denseInfo(msg.data, 2)
			if err != nil {
				return nil, err
			}
			if undefinedAddr(heapAddr, m.offsetSize) {
				continue
			}
			objs, err := m.denseObjects(heapAddr, btreeAddr, btree2AttrName, 0)
			if err != nil {
				return nil, fmt.Errorf("dense attributes: %w", err)
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// attrMessage is a decoded attribute message (spec IV.A.2.m).
type attrMessage struct {
	name  string
	typ   *dtype
	space []int64 // empty: a scalar; {0}: no value (a null dataspace)
	data  []byte
}

// parseAttribute decodes an attribute message of version 1, 2 or 3.
func parseAttribute(b []byte, lengthSize int) (*attrMessage, error) {
	short := fmt.Errorf("%w: attribute message truncated", errFormat)
	if len(b) < 8 {
		return nil, short
	}
	version, flags := b[0], b[1]
	nameSize := int(binary.LittleEndian.Uint16(b[2:]))
	typeSize := int(binary.LittleEndian.Uint16(b[4:]))
	spaceSize := int(binary.LittleEndian.Uint16(b[6:]))
	p := 8
	pad := func(n int) int { return n }
	switch version {
	case 1:
		pad = func(n int) int { return (n + 7) &^ 7 }
	case 2:
	case 3:
		p++ // name character set
	default:
		return nil, fmt.Errorf("%w: attribute message version %d", errFormat, version)
	}
	if flags&3 != 0 {
		return nil, fmt.Errorf("attributes with a shared datatype or dataspace are not supported")
	}
	next := func(n int) ([]byte, error) {
		if p+n > len(b) {
			return nil, short
		}
		s := b[p : p+n]
		p += pad(n)
		return s, nil
	}
	name, err := next(nameSize)
	if err != nil {
		return nil, err
	}
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	a := &attrMessage{name: string(name)}
	tb, err := next(typeSize)
	if err != nil {
		return nil, err
	}
	if a.typ, _, err = parseDatatype(tb); err != nil {
		return nil, fmt.Errorf("attribute %q: %w", a.name, err)
	}
	sb, err := next(spaceSize)
	if err != nil {
		return nil, err
	}
	if a.space, err = parseDataspace(sb, lengthSize); err != nil {
		return nil, fmt.Errorf("attribute %q: %w", a.name, err)
	}
	a.data = b[min(p, len(b)):]
	return a, nil
}
