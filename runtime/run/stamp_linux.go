package run

import (
	"os"
	"strconv"
	"sync"
	"syscall"
)

// statStamp is the stamp of dir now (see dirStamp), nil when it cannot
// be had.
func statStamp(dir string) *dirStamp {
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return nil
	}
	return &dirStamp{Kernel: kernel(), Dev: uint64(st.Dev), Ino: st.Ino, Mtime: st.Mtim.Nano()}
}

// sameDev says whether dir is on device dev.
func sameDev(dir string, dev uint64) bool {
	var st syscall.Stat_t
	return syscall.Stat(dir, &st) == nil && uint64(st.Dev) == dev
}

// kernel is the running kernel's release, asked once per process (a
// stop check stamps journal/ up to three times): a probe's answer holds
// for it only (a reboot into an older kernel may lose fine timestamps).
var kernel = sync.OnceValue(func() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
})

// probeFine says whether the file system of dir gives a file a later
// modification time at every change that follows a stat of it, even
// within one clock tick: Linux's multigrain timestamps (6.13 and later,
// on ext4, xfs, btrfs and tmpfs) do. Three changes a few microseconds
// apart, each seen later than the one before, cannot happen on a file
// system whose timestamps move only at each tick (1 to 10 ms).
func probeFine(dir string) bool {
	f, err := os.CreateTemp(dir, ".mtime-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(f.Name())
	defer f.Close()
	mtime := func() int64 {
		var st syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &st) != nil {
			return -1
		}
		return st.Mtim.Nano()
	}
	last := mtime()
	for i := range 3 {
		if _, err := f.WriteString(strconv.Itoa(i)); err != nil {
			return false
		}
		t := mtime()
		if last < 0 || t <= last {
			return false
		}
		last = t
	}
	return true
}
