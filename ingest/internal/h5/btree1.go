package h5

import (
	"encoding/binary"
	"fmt"
)

// Node types of version-1 B-trees.
const (
	btreeGroup = 0 // children are symbol table nodes (groups)
	btreeChunk = 1 // children are raw data chunks
)

// budget bounds the bytes a walk of linked structures (B-tree nodes, the
// symbol nodes they point to) reads. In a well-formed file such structures
// do not overlap, so they cannot add up to more than the file: more means
// nodes that loop or overlap, which would otherwise cost time quadratic in
// the file's size.
type budget struct {
	left uint64
	what string
}

func (m *meta) budget(what string) *budget { return &budget{left: m.size, what: what} }

// spend accounts for n more bytes.
func (b *budget) spend(n uint64) error {
	if n > b.left {
		return fmt.Errorf("%w: %s larger than the file (its nodes loop or overlap)", errFormat, b.what)
	}
	b.left -= n
	return nil
}

// walkBTree1 calls leaf(key, child) for every entry of the leaf nodes of
// the version-1 B-tree of node type typ rooted at root (spec III.A.1),
// whose keys are keySize bytes; key is the entry's left key.
func (m *meta) walkBTree1(root uint64, typ byte, keySize int, leaf func(key []byte, child uint64) error) error {
	os := m.offsetSize
	hdrSize := 8 + 2*os
	stack := []uint64{root}
	seen := map[uint64]bool{}
	spent := m.budget("B-tree")
	for len(stack) > 0 {
		addr := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[addr] {
			return fmt.Errorf("%w: B-tree node %d visited twice", errFormat, addr)
		}
		seen[addr] = true
		h, err := m.readAt(addr, hdrSize)
		if err != nil {
			return fmt.Errorf("B-tree node: %w", err)
		}
		if string(h[:4]) != "TREE" || h[4] != typ {
			return fmt.Errorf("%w: no B-tree node of type %d at %d", errFormat, typ, addr)
		}
		level := h[5]
		n := int(binary.LittleEndian.Uint16(h[6:]))
		size := n*(keySize+os) + keySize
		if err := spent.spend(uint64(hdrSize + size)); err != nil {
			return err
		}
		body, err := m.readAt(addr+uint64(hdrSize), size)
		if err != nil {
			return fmt.Errorf("B-tree node: %w", err)
		}
		for i := 0; i < n; i++ {
			key := body[i*(keySize+os):]
			child := leUint(key[keySize:], os)
			if level > 0 {
				stack = append(stack, child)
				continue
			}
			if err := leaf(key[:keySize], child); err != nil {
				return err
			}
		}
	}
	return nil
}

// localHeap reads the data segment of the local heap at addr (spec
// III.D), which holds the link names of a symbol-table group.
func (m *meta) localHeap(addr uint64) ([]byte, error) {
	os, ls := m.offsetSize, m.lengthSize
	h, err := m.readAt(addr, 8+2*ls+os)
	if err != nil {
		return nil, fmt.Errorf("local heap: %w", err)
	}
	if string(h[:4]) != "HEAP" || h[4] != 0 {
		return nil, fmt.Errorf("%w: no local heap at %d", errFormat, addr)
	}
	size := leUint(h[8:], ls)
	data := leUint(h[8+2*ls:], os)
	if err := m.inFile(data, size); err != nil {
		return nil, fmt.Errorf("%w: local heap at %d: %w", errFormat, addr, err)
	}
	b, err := m.readAt(data, int(size))
	if err != nil {
		return nil, fmt.Errorf("local heap at %d: %w", addr, err)
	}
	return b, nil
}

// heapString returns the NUL-terminated string at off of a local heap.
func heapString(heap []byte, off uint64) (string, error) {
	if off >= uint64(len(heap)) {
		return "", fmt.Errorf("%w: name at %d outside the %d-byte local heap", errFormat, off, len(heap))
	}
	for i, c := range heap[off:] {
		if c == 0 {
			return string(heap[off : off+uint64(i)]), nil
		}
	}
	return "", fmt.Errorf("%w: name at %d of the local heap is unterminated", errFormat, off)
}

// symbolTableLinks lists the members of a group stored as a symbol table
// (spec III.B, III.C): a version-1 B-tree of symbol nodes, the names in a
// local heap.
func (m *meta) symbolTableLinks(btree, heapAddr uint64) ([]link, error) {
	heap, err := m.localHeap(heapAddr)
	if err != nil {
		return nil, err
	}
	var links []link
	spent := m.budget("symbol table")
	err = m.walkBTree1(btree, btreeGroup, m.lengthSize, func(_ []byte, node uint64) error {
		ls, err := m.symbolNode(node, heap, spent)
		links = append(links, ls...)
		return err
	})
	return links, err
}

// symbolNode reads the entries of the symbol table node at addr.
func (m *meta) symbolNode(addr uint64, heap []byte, spent *budget) ([]link, error) {
	os := m.offsetSize
	h, err := m.readAt(addr, 8)
	if err != nil {
		return nil, fmt.Errorf("symbol table node: %w", err)
	}
	if string(h[:4]) != "SNOD" || h[4] != 1 {
		return nil, fmt.Errorf("%w: no symbol table node at %d", errFormat, addr)
	}
	n := int(binary.LittleEndian.Uint16(h[6:]))
	entry := 2*os + 24 // name offset, header address, cache type, reserved, scratch-pad
	if err := spent.spend(uint64(8 + n*entry)); err != nil {
		return nil, err
	}
	b, err := m.readAt(addr+8, n*entry)
	if err != nil {
		return nil, fmt.Errorf("symbol table node: %w", err)
	}
	links := make([]link, 0, n)
	for i := 0; i < n; i++ {
		e := b[i*entry:]
		if binary.LittleEndian.Uint32(e[2*os:]) == 2 {
			continue // a soft link: its target is a path in the scratch-pad
		}
		name, err := heapString(heap, leUint(e, os))
		if err != nil {
			return nil, err
		}
		links = append(links, link{name: name, addr: leUint(e[os:], os)})
	}
	return links, nil
}
