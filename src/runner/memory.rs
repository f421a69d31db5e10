//! How much memory a new run may take: the least of what the machine has
//! available, what the process's control group may still use, and what its
//! address-space limit (`ulimit -v`) leaves. An allocation beyond any of these
//! aborts the process mid-run, so `sim run` refuses such a run before it starts.

use std::path::Path;

/// Address space a worker thread reserves besides what it uses: its stack
/// (2 MiB for rayon's) and the allocator's arena (glibc reserves 64 MiB a
/// thread), counted against `ulimit -v` only.
const RESERVED_PER_THREAD: u64 = 80 << 20;

/// Bytes a run on `threads` threads may still allocate, if any limit can be
/// read (Linux); `None` where none can, and then nothing is checked.
pub fn available(threads: u64) -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let limits = [
        read("/proc/meminfo").and_then(|t| mem_available(&t)),
        cgroup_room(
            Path::new("/sys/fs/cgroup"),
            read("/proc/self/cgroup").as_deref(),
        ),
        read("/proc/self/limits").and_then(|limits| {
            let size = read("/proc/self/status").and_then(|s| vm_size(&s));
            address_space_room(&limits, size.unwrap_or(0))
                .map(|room| room.saturating_sub(threads * RESERVED_PER_THREAD))
        }),
    ];
    limits.into_iter().flatten().min()
}

/// `MemAvailable` of `/proc/meminfo`, in bytes: Linux's estimate of what a new
/// process can have without swapping.
fn mem_available(meminfo: &str) -> Option<u64> {
    kib_field(meminfo, "MemAvailable:")
}

/// `VmSize` of `/proc/self/status`: the address space already reserved.
fn vm_size(status: &str) -> Option<u64> {
    kib_field(status, "VmSize:")
}

/// A "Name:   1234 kB" line's value, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// What `ulimit -v` leaves: the soft "Max address space" of
/// `/proc/self/limits` less the address space the process has reserved
/// (`size`), or `None` when unlimited. Address space, not memory: thread
/// stacks and allocator arenas count, so this errs on the safe side.
fn address_space_room(limits: &str, size: u64) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?;
    let soft: u64 = soft.parse().ok()?; // "unlimited" does not parse
    Some(soft.saturating_sub(size))
}

/// What the process's memory control group may still use: its limit less
/// its usage, the least over the cgroup v2 (`memory.max`, `memory.current`)
/// and v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`) files found for
/// the process's group (from `/proc/self/cgroup`) and at the mount's root
/// (inside a container the group is often mounted as the root).
fn cgroup_room(root: &Path, self_cgroup: Option<&str>) -> Option<u64> {
    let mut v2_group = None;
    let mut v1_group = None;
    for line in self_cgroup.unwrap_or_default().lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            v2_group = Some(path.to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            v1_group = Some(path.to_string());
        }
    }
    let read = |p: &Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let mut rooms = Vec::new();
    let mut look = |dir: &Path, limit: &str, usage: &str| {
        // "max" (v2) does not parse, and v1 writes a huge number: no limit.
        if let Some(max) = read(&dir.join(limit)).filter(|&m| m < 1 << 60) {
            rooms.push(max.saturating_sub(read(&dir.join(usage)).unwrap_or(0)));
        }
    };
    let v1 = root.join("memory");
    for group in [v2_group.as_deref(), Some("")].into_iter().flatten() {
        look(&root.join(group), "memory.max", "memory.current");
        look(
            &root.join("unified").join(group),
            "memory.max",
            "memory.current",
        );
    }
    for group in [v1_group.as_deref(), Some("")].into_iter().flatten() {
        look(
            &v1.join(group),
            "memory.limit_in_bytes",
            "memory.usage_in_bytes",
        );
    }
    rooms.into_iter().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_meminfo_and_the_address_space_limit() {
        let meminfo = "MemTotal:  24000000 kB\nMemAvailable:  2000 kB\n";
        assert_eq!(mem_available(meminfo), Some(2000 * 1024));
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         1073741824           unlimited            bytes\n";
        assert_eq!(address_space_room(limits, 73741824), Some(1_000_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes\n";
        assert_eq!(address_space_room(unlimited, 0), None);
    }

    #[test]
    fn a_control_groups_limit_less_its_usage_is_the_room() {
        let root = tempfile::tempdir().unwrap();
        // v2, the group named in /proc/self/cgroup.
        let group = root.path().join("box");
        std::fs::create_dir_all(&group).unwrap();
        std::fs::write(group.join("memory.max"), "1000000\n").unwrap();
        std::fs::write(group.join("memory.current"), "400000\n").unwrap();
        assert_eq!(cgroup_room(root.path(), Some("0::/box\n")), Some(600_000));
        // "max" is no limit.
        std::fs::write(group.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_room(root.path(), Some("0::/box\n")), None);
        // v1, mounted as the root inside a container, its huge "no limit".
        let v1 = root.path().join("memory");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(cgroup_room(root.path(), Some("4:memory:/x\n")), None);
        std::fs::write(v1.join("memory.limit_in_bytes"), "500000\n").unwrap();
        std::fs::write(v1.join("memory.usage_in_bytes"), "100000\n").unwrap();
        assert_eq!(
            cgroup_room(root.path(), Some("4:memory:/x\n")),
            Some(400_000)
        );
    }
}
