package main

// The directory behind the buckets: ROOT/BUCKET/KEY. Every first-level
// directory (not starting with '.') is a bucket; keys are the relative paths
// of the regular files under it, with '/'.
//
// Open files are cached by path and revalidated with one stat per request
// (inode, size, mtime), so a GET costs a stat and a pread. Listings walk the
// bucket once and keep its sorted keys; a listing reuses them while no
// directory's mtime changed and the walk is less than a second old.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var errNoBucket = errors.New("no such bucket")
var errNoKey = errors.New("no such key")
var errBadKey = errors.New("key cannot be stored as a file")

const tmpDirName = ".s3link-tmp"

type store struct {
	root  string
	files fileCache
	lists listCache
}

func newStore(root string) *store {
	s := &store{root: root}
	s.files.m = make(map[string]*fileEntry)
	s.lists.m = make(map[string]*bucketList)
	return s
}

func validBucketName(b string) bool {
	return b != "" && b[0] != '.' && !strings.ContainsAny(b, "/\x00") && len(b) <= 255
}

// validKey: the key maps to a file path under its bucket: no empty, "." or
// ".." component, no trailing '/', no NUL.
func validKey(k string) bool {
	if k == "" || len(k) > 1024 || strings.IndexByte(k, 0) >= 0 {
		return false
	}
	for {
		i := strings.IndexByte(k, '/')
		c := k
		if i >= 0 {
			c = k[:i]
		}
		if c == "" || c == "." || c == ".." {
			return false
		}
		if i < 0 {
			return true
		}
		k = k[i+1:]
	}
}

func (s *store) bucketExists(bucket string) bool {
	if !validBucketName(bucket) {
		return false
	}
	fi, err := os.Stat(filepath.Join(s.root, bucket))
	return err == nil && fi.IsDir()
}

// etagOf: a cheap stable ETag from the object's path, size and mtime (not
// its content's MD5: that would read the whole file). 32 hex digits.
func etagOf(path string, size int64, mtimeNs int64) string {
	h := fnv.New128a()
	io.WriteString(h, path)
	var b [16]byte
	for i := 0; i < 8; i++ {
		b[i] = byte(size >> (8 * i))
		b[8+i] = byte(mtimeNs >> (8 * i))
	}
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil))
}

// ---- open files ----------------------------------------------------------

type fileEntry struct {
	f          *os.File
	ino, dev   uint64
	size       int64
	mtime      time.Time
	etag       string   // quoted
	etagHdr    []string // shared, read-only header values
	lastModHdr []string
	refs       int
	evicted    bool
}

type fileCache struct {
	mu sync.Mutex
	m  map[string]*fileEntry
}

const maxOpenFiles = 4096

// acquire: the open file of BUCKET/KEY (rel), valid for this request;
// release it after use.
func (s *store) acquire(bucket, rel string) (*fileEntry, error) {
	full := s.root + "/" + rel
	fi, err := os.Stat(full)
	if err != nil || !fi.Mode().IsRegular() {
		if !s.bucketExists(bucket) {
			return nil, errNoBucket
		}
		return nil, errNoKey
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	fc := &s.files
	fc.mu.Lock()
	if e := fc.m[rel]; e != nil && st != nil && e.ino == st.Ino && e.dev == uint64(st.Dev) &&
		e.size == fi.Size() && e.mtime.Equal(fi.ModTime()) {
		e.refs++
		fc.mu.Unlock()
		return e, nil
	}
	fc.mu.Unlock()
	f, err := os.Open(full)
	if err != nil {
		return nil, errNoKey
	}
	fi, err = f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errNoKey
	}
	e := &fileEntry{f: f, size: fi.Size(), mtime: fi.ModTime(), refs: 1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.ino, e.dev = st.Ino, uint64(st.Dev)
	}
	e.etag = `"` + etagOf(rel, e.size, e.mtime.UnixNano()) + `"`
	e.etagHdr = []string{e.etag}
	e.lastModHdr = []string{e.mtime.UTC().Format(http.TimeFormat)}
	fc.mu.Lock()
	if old := fc.m[rel]; old != nil {
		fc.dropLocked(old)
	}
	if len(fc.m) >= maxOpenFiles {
		for k, v := range fc.m {
			fc.dropLocked(v)
			delete(fc.m, k)
			if len(fc.m) < maxOpenFiles/2 {
				break
			}
		}
	}
	fc.m[rel] = e
	fc.mu.Unlock()
	return e, nil
}

func (fc *fileCache) dropLocked(e *fileEntry) {
	e.evicted = true
	if e.refs == 0 {
		e.f.Close()
	}
}

func (s *store) release(e *fileEntry) {
	fc := &s.files
	fc.mu.Lock()
	e.refs--
	if e.refs == 0 && e.evicted {
		e.f.Close()
	}
	fc.mu.Unlock()
}

func (s *store) forget(rel string) {
	fc := &s.files
	fc.mu.Lock()
	if e := fc.m[rel]; e != nil {
		fc.dropLocked(e)
		delete(fc.m, rel)
	}
	fc.mu.Unlock()
}

// ---- listings ------------------------------------------------------------

type listEntry struct {
	key   string
	size  int64
	mtime time.Time
}

func (le *listEntry) etag(bucket string) string {
	return `"` + etagOf(bucket+"/"+le.key, le.size, le.mtime.UnixNano()) + `"`
}

type dirStamp struct {
	path  string
	mtime time.Time
}

type bucketList struct {
	entries []listEntry
	dirs    []dirStamp
	walked  time.Time
}

type listCache struct {
	mu sync.Mutex
	m  map[string]*bucketList
}

const listMaxAge = time.Second

// keys: the bucket's sorted keys, walked afresh when a directory changed or
// the last walk is a second old.
func (s *store) keys(bucket string) (*bucketList, error) {
	if !s.bucketExists(bucket) {
		return nil, errNoBucket
	}
	lc := &s.lists
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if bl := lc.m[bucket]; bl != nil && time.Since(bl.walked) < listMaxAge && bl.fresh() {
		return bl, nil
	}
	bl, err := walkBucket(filepath.Join(s.root, bucket))
	if err != nil {
		return nil, err
	}
	lc.m[bucket] = bl
	return bl, nil
}

func (bl *bucketList) fresh() bool {
	for _, d := range bl.dirs {
		fi, err := os.Stat(d.path)
		if err != nil || !fi.ModTime().Equal(d.mtime) {
			return false
		}
	}
	return true
}

func (s *store) invalidate(bucket string) {
	s.lists.mu.Lock()
	delete(s.lists.m, bucket)
	s.lists.mu.Unlock()
}

func walkBucket(dir string) (*bucketList, error) {
	bl := &bucketList{walked: time.Now()}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // vanished or unreadable: not listed
		}
		if d.IsDir() {
			if fi, err := d.Info(); err == nil {
				bl.dirs = append(bl.dirs, dirStamp{path: path, mtime: fi.ModTime()})
			}
			return nil
		}
		var fi fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			fi, err = os.Stat(path)
		} else {
			fi, err = d.Info()
		}
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return nil
		}
		bl.entries = append(bl.entries, listEntry{key: filepath.ToSlash(rel), size: fi.Size(), mtime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(bl.entries, func(i, j int) bool { return bl.entries[i].key < bl.entries[j].key })
	return bl, nil
}

// prefixEnd: the smallest string greater than every string starting with p
// ("" when there is none).
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

type listPage struct {
	contents  []listEntry
	prefixes  []string
	truncated bool
	last      string // the last key or common prefix returned
	lastIsCP  bool
}

// page: up to maxKeys keys and common prefixes under prefix, grouped by
// delimiter, after `after` (a key, or with afterCP every key under that
// common prefix).
func (bl *bucketList) page(prefix, delim, after string, afterCP bool, maxKeys int) listPage {
	es := bl.entries
	n := len(es)
	lo := prefix
	i := sort.Search(n, func(i int) bool { return es[i].key >= lo })
	if after != "" {
		var j int
		if afterCP {
			end := prefixEnd(after)
			if end == "" {
				j = n
			} else {
				j = sort.Search(n, func(i int) bool { return es[i].key >= end })
			}
		} else {
			j = sort.Search(n, func(i int) bool { return es[i].key > after })
		}
		if j > i {
			i = j
		}
	}
	var pg listPage
	count := 0
	for i < n && strings.HasPrefix(es[i].key, prefix) {
		if count >= maxKeys {
			pg.truncated = maxKeys > 0
			break
		}
		k := es[i].key
		if delim != "" {
			if j := strings.Index(k[len(prefix):], delim); j >= 0 {
				cp := k[:len(prefix)+j+len(delim)]
				pg.prefixes = append(pg.prefixes, cp)
				count++
				pg.last, pg.lastIsCP = cp, true
				// Skip every key under cp (a contiguous run).
				base := i
				i = base + sort.Search(n-base, func(m int) bool { return !strings.HasPrefix(es[base+m].key, cp) })
				continue
			}
		}
		pg.contents = append(pg.contents, es[i])
		count++
		pg.last, pg.lastIsCP = k, false
		i++
	}
	return pg
}

// ---- writes (test set-up) --------------------------------------------------

// putObject stores body as BUCKET/KEY (through a temporary file and a
// rename) and returns its ETag (quoted).
func (s *store) putObject(bucket, key string, body io.Reader) (string, int64, error) {
	if !s.bucketExists(bucket) {
		return "", 0, errNoBucket
	}
	if !validKey(key) {
		return "", 0, errBadKey
	}
	tmpDir := filepath.Join(s.root, tmpDirName)
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", 0, err
	}
	f, err := os.CreateTemp(tmpDir, "put-*")
	if err != nil {
		return "", 0, err
	}
	tmp := f.Name()
	bp := getBuf()
	n, err := io.CopyBuffer(onlyWriter{f}, onlyReader{body}, *bp)
	putBuf(bp)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", 0, err
	}
	dst := filepath.Join(s.root, bucket, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		os.Remove(tmp)
		return "", 0, errBadKey
	}
	if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
		os.Remove(tmp)
		return "", 0, errBadKey
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return "", 0, err
	}
	s.invalidate(bucket)
	rel := bucket + "/" + key
	s.forget(rel)
	fi, err := os.Stat(dst)
	if err != nil {
		return "", 0, err
	}
	return `"` + etagOf(rel, fi.Size(), fi.ModTime().UnixNano()) + `"`, n, nil
}

// deleteObject removes BUCKET/KEY and the directories it leaves empty.
func (s *store) deleteObject(bucket, key string) error {
	if !s.bucketExists(bucket) {
		return errNoBucket
	}
	if !validKey(key) {
		return nil // S3: deleting a missing key succeeds
	}
	bdir := filepath.Join(s.root, bucket)
	dst := filepath.Join(bdir, filepath.FromSlash(key))
	if fi, err := os.Stat(dst); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
		return err
	}
	for d := filepath.Dir(dst); d != bdir && strings.HasPrefix(d, bdir); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	s.invalidate(bucket)
	s.forget(bucket + "/" + key)
	return nil
}

func (s *store) createBucket(bucket string) error {
	if !validBucketName(bucket) {
		return errBadKey
	}
	s.invalidate(bucket)
	return os.MkdirAll(filepath.Join(s.root, bucket), 0o755)
}

func (s *store) buckets() ([]string, []time.Time, error) {
	des, err := os.ReadDir(s.root)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	var times []time.Time
	for _, d := range des {
		if !validBucketName(d.Name()) {
			continue
		}
		fi, err := os.Stat(filepath.Join(s.root, d.Name()))
		if err != nil || !fi.IsDir() {
			continue
		}
		names = append(names, d.Name())
		times = append(times, fi.ModTime())
	}
	return names, times, nil
}

// onlyWriter / onlyReader hide ReadFrom / WriteTo so io.CopyBuffer uses the
// pooled buffer.
type onlyWriter struct{ io.Writer }
type onlyReader struct{ io.Reader }

// ---- pooled read buffers ---------------------------------------------------

const (
	bufSize      = 256 << 10
	smallBufSize = 16 << 10
)

var bufPool = sync.Pool{New: func() interface{} { b := make([]byte, bufSize); return &b }}
var smallBufPool = sync.Pool{New: func() interface{} { b := make([]byte, smallBufSize); return &b }}

// getBuf: a pooled buffer for n bytes (small ranges take a small one).
func getBufFor(n int64) *[]byte {
	if n <= smallBufSize {
		return smallBufPool.Get().(*[]byte)
	}
	return bufPool.Get().(*[]byte)
}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if len(*b) == smallBufSize {
		smallBufPool.Put(b)
	} else {
		bufPool.Put(b)
	}
}

// hostID: a stable x-amz-id-2 for this process.
func hostID() string {
	h := sha256.Sum256([]byte(strconv.Itoa(os.Getpid()) + time.Now().String()))
	return hex.EncodeToString(h[:])
}
