import Foundation
import GifPackSystem
import Testing
@testable import GifPackClient
@testable import GifPackTestSupport

/// The portable client stays portable. What an app links (product
/// `GifPackClient`) is read from the package itself (`swift package describe --type json`), its
/// whole target closure computed, and checked: no system library or C target in it, only the
/// allowed package products (swift-crypto), no file outside a module's `Platform.swift`
/// importing the C library (Glibc, Darwin, Musl, …) or a C module, none spelling a name that
/// exists in only one of glibc and Darwin (`st_mtim`, `Glibc.fsync`, `syncfs`, `UTIME_NOW`, …), and
/// none calling the C library (`open(`, `fstat(`, `errno`, `O_CREAT`, `S_IFDIR`, …) that Foundation
/// re-exports: those calls live in a module's Platform.swift behind thin typed wrappers.
@Suite("Client portability", .timeLimit(.minutes(5)))
struct ClientPortabilityTests {
    @Test("the GifPackClient closure holds no system library, no C target and no product but swift-crypto's")
    func closureHasNoSystemLibrary() async throws {
        let package = try await PackageDescription.describe()
        let closure = try package.closure(ofProduct: "GifPackClient")
        #expect(closure.targets.map(\.name).contains("GifPackClient"))
        let problems = package.portabilityProblems(in: closure)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("no file in the GifPackClient closure imports the C library or a C module outside its Platform.swift")
    func closureImportsNoCModule() async throws {
        let package = try await PackageDescription.describe()
        let sources = try package.closureSources(ofProduct: "GifPackClient")
        let problems = sources.flatMap { source in
            ImportScan.problems(in: source.text, file: source.path, isPlatformFile: source.isPlatformFile, cModules: package.cModuleNames)
        }
        #expect(sources.count > 50, "only \(sources.count) files scanned: the closure was not read")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("no file in the GifPackClient closure spells a glibc-only or Darwin-only name outside its Platform.swift")
    func closureUsesNoPlatformOnlyNames() async throws {
        let sources = try await PackageDescription.describe().closureSources(ofProduct: "GifPackClient").filter { !$0.isPlatformFile }
        let problems = sources.flatMap { PlatformNameScan.problems(in: $0.text, file: $0.path) }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("no file in the GifPackClient closure calls the C library outside its Platform.swift")
    func closureCallsNoCLibrary() async throws {
        let sources = try await PackageDescription.describe().closureSources(ofProduct: "GifPackClient").filter { !$0.isPlatformFile }
        let problems = sources.flatMap { CCallScan.problems(in: $0.text, file: $0.path) }
        #expect(sources.count > 50, "only \(sources.count) files scanned: the closure was not read")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // The checks themselves, on inputs made to fail them: a check that cannot fail proves nothing.

    @Test("the C call scan names file, line and the C names, and skips comments, strings, members, declarations and labels", .computes)
    func cCallScanCatchesViolations() {
        let text = #"""
            let fd = open(path, O_RDONLY | O_CLOEXEC, 0o644)
            // close(fd) in a comment is fine
            guard fstat (fd, &info) == 0 else { throw .io(path: path, errno: errno) }
            let message = "read(2) failed: \(strerror(code))"
            if info.st_mode & S_IFMT == S_IFREG, errno == ENOENT { flock(fd, LOCK_EX) }
            let fine = SystemCalls.open(path, [.readOnly]); handle.close(); throw .io(path: path, errno: code)
            func write(_ bytes: [UInt8]) {}
            try write(bytes) /* unlink(path) */
            let id = "\(getpid())"
            let text = """
                rename(a, b) in a multi-line string
                """
            var info = stat()
            while pthread_mutex_lock(&mutex) != 0 {}
            switch mode { case S_IFDIR: break }
            """#
        #expect(
            CCallScan.problems(in: text, file: "F.swift") == [
                "F.swift:1: open, O_RDONLY, O_CLOEXEC (the C library: call the module's Platform.swift wrappers)",
                "F.swift:3: fstat, errno (the C library: call the module's Platform.swift wrappers)",
                "F.swift:4: strerror (the C library: call the module's Platform.swift wrappers)",
                "F.swift:5: S_IFMT, S_IFREG, errno, ENOENT, flock, LOCK_EX (the C library: call the module's Platform.swift wrappers)",
                "F.swift:9: getpid (the C library: call the module's Platform.swift wrappers)",
                "F.swift:13: stat (the C library: call the module's Platform.swift wrappers)",
                "F.swift:14: pthread_mutex_lock (the C library: call the module's Platform.swift wrappers)",
                "F.swift:15: S_IFDIR (the C library: call the module's Platform.swift wrappers)"
            ])
    }

    @Test("the platform-name scan names file, line and name, and skips comments", .computes)
    func platformNameScanCatchesViolations() {
        let text = """
            let used = info.st_mtim.tv_sec
            // st_mtim in a comment is fine
            _ = Glibc.fsync(fd)
            let which = __priority_which_t(0)
            let when = info.st_mtimespec   /* also one */
            let fine = info.st_size
            throw .posix(path, "syncfs")
            """
        #expect(
            PlatformNameScan.problems(in: text, file: "F.swift") == [
                "F.swift:1: st_mtim (spelled differently in glibc and Darwin: use the module's Platform.swift)",
                "F.swift:3: Glibc. (spelled differently in glibc and Darwin: use the module's Platform.swift)",
                "F.swift:4: __ (spelled differently in glibc and Darwin: use the module's Platform.swift)",
                "F.swift:5: st_mtimespec (spelled differently in glibc and Darwin: use the module's Platform.swift)"
            ])
    }

    @Test("the closure check names a system library, a C target and a foreign product reached indirectly", .computes)
    func closureCheckCatchesViolations() throws {
        let json = """
            {"targets": [
              {"name": "App", "type": "library", "module_type": "SwiftTarget", "path": "Sources/App", "sources": ["A.swift"],
               "target_dependencies": ["Mid"], "product_dependencies": ["Crypto"]},
              {"name": "Mid", "type": "library", "module_type": "SwiftTarget", "path": "Sources/Mid", "sources": ["M.swift"],
               "target_dependencies": ["CCurl", "CShim"], "product_dependencies": ["Yams"]},
              {"name": "CCurl", "type": "system-target", "module_type": "SystemLibraryTarget", "path": "Sources/CCurl", "sources": []},
              {"name": "CShim", "type": "library", "module_type": "ClangTarget", "path": "Sources/CShim", "sources": ["s.c"]},
              {"name": "Unrelated", "type": "system-target", "module_type": "SystemLibraryTarget", "path": "Sources/U", "sources": []}
            ],
            "products": [{"name": "GifPackClient", "targets": ["App"], "type": {"library": ["automatic"]}}]}
            """
        let package = try PackageDescription(json: Data(json.utf8), root: "/x")
        let closure = try package.closure(ofProduct: "GifPackClient")
        #expect(Set(closure.targets.map(\.name)) == ["App", "Mid", "CCurl", "CShim"])
        let problems = package.portabilityProblems(in: closure).joined(separator: "\n")
        #expect(problems.contains("CCurl"))
        #expect(problems.contains("system library"))
        #expect(problems.contains("CShim"))
        #expect(problems.contains("Yams"))
        #expect(!problems.contains("Unrelated"))
        #expect(!problems.contains("product Crypto"))
        #expect(package.cModuleNames == ["CCurl", "CShim", "Unrelated"])
    }

    @Test("the import scan names file and line of a C library or C module import, and allows Platform.swift its C library", .computes)
    func importScanCatchesViolations() {
        let text = """
            import Foundation
            // import Glibc (a comment is not an import)
            #if canImport(Glibc)
            import Glibc
            #endif
            @preconcurrency import CCurl
            @_exported import Darwin
            import struct Musl.stat
            import GifPackFormat
            """
        let problems = ImportScan.problems(in: text, file: "Sources/M/File.swift", isPlatformFile: false, cModules: ["CCurl"])
        #expect(
            problems == [
                "Sources/M/File.swift:4: imports Glibc (only the module's Platform.swift may)",
                "Sources/M/File.swift:6: imports C module CCurl",
                "Sources/M/File.swift:7: imports Darwin (only the module's Platform.swift may)",
                "Sources/M/File.swift:8: imports Musl (only the module's Platform.swift may)"
            ])
        let platform = ImportScan.problems(
            in: "#if canImport(Glibc)\nimport Glibc\n#else\nimport CZstd\n#endif\n",
            file: "Sources/M/Platform.swift", isPlatformFile: true, cModules: ["CZstd"])
        #expect(platform == ["Sources/M/Platform.swift:4: imports C module CZstd"])
        #expect(ImportScan.problems(in: "import Glibc\n", file: "Sources/M/Platform.swift", isPlatformFile: true, cModules: []).isEmpty)
    }
}

/// The file times the lazy cache reads go through `SystemCalls.modificationTime` (`st_mtim` in
/// glibc, `st_mtimespec` in Darwin); a time the cache did not write is untrusted input.
@Suite("Client portability: file times", .timeLimit(.minutes(5)))
struct ClientFileTimeTests {
    @Test("a cached GIF whose mtime is centuries ahead is trimmed by least-recent use, not a trap", .computes)
    func farFutureModificationTime() throws {
        let directory = try TemporaryDirectory()
        let store = LazyGIFStore(directory: directory.path)
        try store.prepare()
        let (old, new) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64))
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: store.gifPath(old)))
        // Year 2350: past Int64 nanoseconds (2262), within ext4's and tmpfs's range.
        let future = Date(timeIntervalSince1970: 12_000_000_000)
        try FileManager.default.setAttributes([.modificationDate: future], ofItemAtPath: store.gifPath(old))
        let stamped = try FileManager.default.attributesOfItem(atPath: store.gifPath(old))[.modificationDate] as? Date
        #expect(stamped == future, "the file system kept another time: the test proves nothing here")
        let temporary = store.temporaryFile(.gif)
        try Data(repeating: 2, count: 100).write(to: URL(fileURLWithPath: temporary))
        try store.storeGIF(temporary, sha256: new, byteLimit: 150)
        #expect(!FileManager.default.fileExists(atPath: store.gifPath(old)))
        #expect(FileManager.default.fileExists(atPath: store.gifPath(new)))
        #expect(try store.storedBytes() == 100)
    }
}

/// The parts of `swift package describe --type json` the checks read.
struct PackageDescription {
    struct Target {
        var name: String
        var type: String
        var moduleType: String
        var path: String
        var sources: [String]
        var targetDependencies: [String]
        var productDependencies: [String]
    }

    struct Closure {
        var targets: [Target]
        var products: Set<String>
    }

    /// Package products the client closure may use: swift-crypto's (CryptoKit on Apple platforms).
    static let allowedProducts: Set<String> = ["Crypto"]

    let root: String
    let targets: [String: Target]
    let products: [String: [String]]

    init(json: Data, root: String) throws {
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any],
            let targetList = object["targets"] as? [[String: Any]],
            let productList = object["products"] as? [[String: Any]]
        else {
            throw DescribeError("swift package describe: no targets or products in its JSON")
        }
        var targets: [String: Target] = [:]
        for entry in targetList {
            guard let name = entry["name"] as? String, let type = entry["type"] as? String,
                let path = entry["path"] as? String
            else { throw DescribeError("a target without name, type or path: \(entry)") }
            targets[name] = Target(
                name: name, type: type, moduleType: entry["module_type"] as? String ?? "",
                path: path, sources: entry["sources"] as? [String] ?? [],
                targetDependencies: entry["target_dependencies"] as? [String] ?? [],
                productDependencies: entry["product_dependencies"] as? [String] ?? [])
        }
        var products: [String: [String]] = [:]
        for entry in productList {
            guard let name = entry["name"] as? String, let members = entry["targets"] as? [String] else {
                throw DescribeError("a product without name or targets: \(entry)")
            }
            products[name] = members
        }
        self.root = root
        self.targets = targets
        self.products = products
    }

    /// This package, described by the `swift` that runs the tests. A scratch directory of its own
    /// keeps it clear of the lock the running `swift test` holds on `.build`; describing needs no
    /// dependency checkout. `GIFPACK_PORTABILITY_ROOT` points the checks at another checkout (an
    /// older commit, to see them fail on it).
    static func describe() async throws -> PackageDescription {
        let root =
            ProcessInfo.processInfo.environment["GIFPACK_PORTABILITY_ROOT"]
            ?? #filePath.replacingOccurrences(of: "/Tests/GifPackCLITests/ClientPortabilityTests.swift", with: "")
        let swift = try swiftExecutable()
        let scratch = try TemporaryDirectory()
        let result = try await run(
            swift,
            [
                "package", "--package-path", root, "--scratch-path", scratch.file("build"),
                "describe", "--type", "json"
            ])
        guard result.status == 0 else { throw DescribeError("swift package describe exited \(result.status): \(result.error)") }
        return try PackageDescription(json: Data(result.output.utf8), root: root)
    }

    /// The `swift` on PATH (the toolchain running these tests).
    static func swiftExecutable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(directory)/swift") {
            return "\(directory)/swift"
        }
        throw DescribeError("no swift on PATH (\(path))")
    }

    /// Every target the product's targets depend on, directly or not, and the package products they use.
    func closure(ofProduct product: String) throws -> Closure {
        guard let members = products[product] else { throw DescribeError("no product \(product)") }
        var seen: [String] = []
        var pending = members
        var usedProducts: Set<String> = []
        while let name = pending.popLast() {
            guard !seen.contains(name) else { continue }
            guard let target = targets[name] else { throw DescribeError("\(product) depends on unknown target \(name)") }
            seen.append(name)
            pending += target.targetDependencies
            usedProducts.formUnion(target.productDependencies)
        }
        return Closure(targets: seen.compactMap { targets[$0] }, products: usedProducts)
    }

    /// The Swift sources of a product's closure: path relative to the package, text, and whether
    /// the file is its module's Platform.swift.
    func closureSources(ofProduct product: String) throws -> [(path: String, text: String, isPlatformFile: Bool)] {
        try closure(ofProduct: product).targets.flatMap { target in
            try target.sources.filter { $0.hasSuffix(".swift") }.map { source in
                let relative = "\(target.path)/\(source)"
                return (relative, try String(contentsOfFile: "\(root)/\(relative)", encoding: .utf8), source == "Platform.swift")
            }
        }
    }

    /// One line per system library target, C target or foreign product in the closure.
    func portabilityProblems(in closure: Closure) -> [String] {
        var problems: [String] = []
        for target in closure.targets.sorted(by: { $0.name < $1.name }) {
            if target.type == "system-target" || target.moduleType == "SystemLibraryTarget" {
                problems.append("\(target.name) is a system library target (\(target.path))")
            } else if target.moduleType != "SwiftTarget" {
                problems.append("\(target.name) is not a Swift target (\(target.moduleType), \(target.path))")
            }
        }
        for product in closure.products.subtracting(Self.allowedProducts).sorted() {
            problems.append("package product \(product) is in the closure (allowed: \(Self.allowedProducts.sorted()))")
        }
        return problems
    }

    /// The package's system library and C targets: modules no portable file may import.
    var cModuleNames: Set<String> {
        Set(targets.values.filter { $0.type == "system-target" || $0.moduleType != "SwiftTarget" }.map(\.name))
    }
}

/// Finds names that exist in only one of glibc and Darwin (or are spelled differently there), or
/// only on Linux, in Swift source text outside comments: they belong in a module's Platform.swift.
enum PlatformNameScan {
    /// Whole identifiers (or prefixes, for `__`, `Glibc.` and `Darwin.`).
    static let names: [String] = [
        "st_mtim", "st_atim", "st_ctim", "st_mtimespec", "st_atimespec", "st_ctimespec", "Glibc.", "Darwin.", "__",
        "O_TMPFILE", "syncfs", "fdatasync", "dlsym", "SOCK_CLOEXEC", "MSG_NOSIGNAL", "SO_NOSIGPIPE", "epoll_", "eventfd",
        "pipe2", "accept4", "mallopt", "sendfile", "copy_file_range", "posix_fadvise", "F_FULLFSYNC", "os_unfair_lock",
        "UTIME_NOW"
    ]

    static func problems(in text: String, file: String) -> [String] {
        var problems: [String] = []
        for (index, line) in SwiftSource(name: file, text: text).lines.enumerated() {
            let stripped = line.replacingOccurrences(of: "@inline(__always)", with: "")
            for name in names where contains(stripped, name) {
                problems.append("\(file):\(index + 1): \(name) (spelled differently in glibc and Darwin: use the module's Platform.swift)")
                break
            }
        }
        return problems
    }

    /// `name` in `code` not inside a longer identifier (a prefix match for names ending in `.` or `_`,
    /// or `__`, which starts reserved C names).
    private static func contains(_ code: String, _ name: String) -> Bool {
        let isIdentifier: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" }
        var searchStart = code.startIndex
        while let found = code.range(of: name, range: searchStart..<code.endIndex) {
            let before = found.lowerBound == code.startIndex ? nil : code[code.index(before: found.lowerBound)]
            let after = found.upperBound == code.endIndex ? nil : code[found.upperBound]
            let prefixOnly = name.hasSuffix(".") || name.hasSuffix("_") || name == "__"
            if before.map(isIdentifier) != true && (prefixOnly || after.map(isIdentifier) != true) { return true }
            searchStart = found.upperBound
        }
        return false
    }
}

/// Finds direct calls of C library functions (`open(`, `fstat(`, `flock(`, `pthread_…(`, …) and uses
/// of `errno` and the C constants (`O_…`, `S_IF…`, errno values, `LOCK_…`, `AT_…`) in Swift source
/// text outside comments and string literals (interpolated code is scanned). Members (`.close()`),
/// declarations and argument labels (`errno:`) are not uses, nor is a call of a function the same
/// file declares under a C name (a type's own `read(…)`).
enum CCallScan {
    static let functions: Set<String> = [
        "open", "openat", "creat", "read", "pread", "readv", "write", "pwrite", "writev", "close", "lseek",
        "stat", "fstat", "lstat", "fstatat", "statvfs", "fstatvfs", "rename", "renameat", "link", "linkat",
        "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "symlink", "symlinkat", "readlink", "readlinkat",
        "flock", "fcntl", "lockf", "fsync", "fdatasync", "syncfs", "sync", "ftruncate", "truncate", "access",
        "faccessat", "chmod", "fchmod", "chown", "fchown", "umask", "utimensat", "futimens", "utimes",
        "realpath", "getcwd", "chdir", "opendir", "fdopendir", "readdir", "closedir", "rewinddir", "dirfd",
        "mkstemp", "mkdtemp", "tmpfile", "fopen", "fdopen", "fclose", "fread", "fwrite", "fflush", "fileno",
        "dup", "dup2", "pipe", "poll", "isatty", "ioctl", "mmap", "munmap", "madvise", "msync",
        "strerror", "strerror_r", "perror", "getpid", "getppid", "getuid", "geteuid", "kill", "raise", "signal",
        "sigaction", "getenv", "setenv", "unsetenv", "time", "clock_gettime", "gettimeofday", "nanosleep",
        "usleep", "sleep", "sched_yield", "setpriority", "getpriority", "getrlimit", "setrlimit", "sysconf",
        "dlopen", "dlsym", "dlclose", "malloc", "calloc", "realloc", "free", "posix_memalign", "memcpy",
        "memmove", "memset", "memcmp", "strlen", "strcmp", "exit", "_exit", "abort"
    ]
    static let functionPrefixes = ["pthread_", "posix_"]
    static let constants: Set<String> = [
        "errno", "ENOENT", "EINTR", "EEXIST", "EINVAL", "EWOULDBLOCK", "EAGAIN", "EXDEV", "EPERM", "EMLINK",
        "ENOTSUP", "EOPNOTSUPP", "EACCES", "EIO", "EISDIR", "ENOTDIR", "ENOSPC", "EBADF", "ENOTEMPTY", "ELOOP",
        "ENAMETOOLONG", "EROFS", "EFBIG", "EPIPE", "EBUSY", "ENOMEM", "EDQUOT", "ESPIPE", "ENXIO"
    ]
    static let constantPrefixes = ["O_", "S_IF", "LOCK_", "AT_", "SEEK_", "F_", "DT_", "PROT_", "MAP_"]
    static let declarationWords: Set<String> = ["func", "var", "let", "typealias", "struct", "class", "enum"]

    static func problems(in text: String, file: String) -> [String] {
        let code = SwiftSource(name: file, text: text).lines
        var declared: Set<String> = []
        for line in code {
            let words = identifiers(in: line)
            for (index, word) in words.enumerated() where index > 0 && words[index - 1].name == "func" { declared.insert(word.name) }
        }
        var problems: [String] = []
        for (index, line) in code.enumerated() {
            let words = identifiers(in: line)
            var found: [String] = []
            for (position, word) in words.enumerated() where word.before != "." {
                if position > 0, declarationWords.contains(words[position - 1].name), word.before == " " { continue }
                let isFunction = functions.contains(word.name) || functionPrefixes.contains { word.name.hasPrefix($0) }
                if isFunction, word.after == "(", !declared.contains(word.name) {
                    found.append(word.name)
                } else if word.name == "errno" ? word.after != ":" : isConstant(word.name) {
                    found.append(word.name)
                }
            }
            if !found.isEmpty {
                problems.append("\(file):\(index + 1): \(found.joined(separator: ", ")) (the C library: call the module's Platform.swift wrappers)")
            }
        }
        return problems
    }

    private static func isConstant(_ name: String) -> Bool {
        if constants.contains(name) { return true }
        guard let prefix = constantPrefixes.first(where: { name.hasPrefix($0) }), name.count > prefix.count else { return false }
        return name.allSatisfy { $0.isUppercase || $0.isNumber || $0 == "_" }
    }

    /// Each identifier with the non-blank character before it and after it ("" at either end).
    private static func identifiers(in line: String) -> [(name: String, before: String, after: String)] {
        let characters = Array(line)
        var result: [(name: String, before: String, after: String)] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            guard character.isLetter || character == "_" else { index += 1; continue }
            let start = index
            while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" { index += 1 }
            var back = start - 1
            while back >= 0, characters[back] == " " || characters[back] == "\t" { back -= 1 }
            // A blank before a word is reported as " " (after a declaration keyword), else the character itself.
            let before = back < 0 ? "" : (back < start - 1 && characters[back] != "." ? " " : String(characters[back]))
            var ahead = index
            while ahead < characters.count, characters[ahead] == " " || characters[ahead] == "\t" { ahead += 1 }
            let after = ahead < characters.count ? String(characters[ahead]) : ""
            if start > 0, characters[start - 1].isNumber { continue }  // 0o644, 1e3
            result.append((String(characters[start..<index]), before, after))
        }
        return result
    }
}

/// Finds `import` declarations of the C library or of C modules in Swift source text.
enum ImportScan {
    /// The C library's module on each platform Swift runs on.
    static let cLibraries: Set<String> = ["Glibc", "Darwin", "Musl", "Bionic", "Android", "WASILibc", "ucrt", "CRT", "WinSDK"]

    static func problems(in text: String, file: String, isPlatformFile: Bool, cModules: Set<String>) -> [String] {
        var problems: [String] = []
        for (index, line) in SwiftSource(name: file, text: text).lines.enumerated() {
            guard let module = importedModule(Substring(line)) else { continue }
            if cLibraries.contains(module), !isPlatformFile {
                problems.append("\(file):\(index + 1): imports \(module) (only the module's Platform.swift may)")
            } else if cModules.contains(module) {
                problems.append("\(file):\(index + 1): imports C module \(module)")
            }
        }
        return problems
    }

    /// The top-level module an `import` line names (`@attr import [kind] Module[.Sub]`), or nil.
    static func importedModule(_ line: Substring) -> String? {
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })[...]
        while let first = words.first, first.hasPrefix("@") { words = words.dropFirst() }
        guard words.first == "import" else { return nil }
        words = words.dropFirst()
        let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
        if let kind = words.first, kinds.contains(kind) { words = words.dropFirst() }
        guard let path = words.first else { return nil }
        return path.split(separator: ".").first.map(String.init)
    }
}

struct DescribeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
