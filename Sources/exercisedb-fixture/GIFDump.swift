import ExerciseDBFixture
import Foundation

/// Writes each distinct GIF of a catalog once, as `<dir>/<first id serving it>.gif`.
///
/// ```swift
/// let count = try GIFDump.write(server.catalog, to: "/tmp/gifs")
/// ```
enum GIFDump {
    static func write(_ catalog: FixtureCatalog, to directory: String) throws -> Int {
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let gifs = catalog.distinctGIFs()
        for (id, bytes) in gifs {
            try Data(bytes).write(to: folder.appendingPathComponent("\(id).gif"), options: .atomic)
        }
        return gifs.count
    }
}
