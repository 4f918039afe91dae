extension ManifestLoader {
    /// RapidAPI's `source.resolutions: [180]`, or the older `source.resolution: 180` read as a list of
    /// one; 180 when neither is given. Each value must be one `/image` accepts and appear once.
    func parseResolutions(_ keys: [String: ManifestNode], in node: ManifestNode) throws(ManifestError) -> [Resolution] {
        switch (keys["resolution"], keys["resolutions"]) {
        case (nil, nil):
            return [.pixels(180)]
        case (let single?, nil):
            return [try resolution(single)]
        case (nil, let list?):
            var resolutions: [Resolution] = []
            for element in try list.sequence() {
                let resolution = try resolution(element)
                guard !resolutions.contains(resolution) else {
                    throw .invalidValue(path: element.path, reason: "\(resolution) appears twice")
                }
                resolutions.append(resolution)
            }
            guard !resolutions.isEmpty else { throw .invalidValue(path: list.path, reason: "list at least one resolution") }
            return resolutions
        case (_?, _?):
            throw .invalidValue(path: node.path, reason: "give resolution or resolutions, not both")
        }
    }

    /// A pack's `resolutions: [360]`: some of the source's resolutions (in the source's order).
    func parsePackResolutions(_ node: ManifestNode, source: SourceSettings) throws(ManifestError) -> [Resolution] {
        guard source.kind == .rapidAPI else {
            throw .invalidValue(path: node.path, reason: "not used by exercisedb-v1 (it serves one resolution)")
        }
        var chosen: [Resolution] = []
        for element in try node.sequence() {
            let resolution = try resolution(element)
            guard source.resolutions.contains(resolution) else {
                throw .invalidValue(path: element.path, reason: "\(resolution) is not one of source.resolutions ("
                                        + source.resolutions.map(\.description).joined(separator: ", ") + ")")
            }
            guard !chosen.contains(resolution) else { throw .invalidValue(path: element.path, reason: "\(resolution) appears twice") }
            chosen.append(resolution)
        }
        guard !chosen.isEmpty else { throw .invalidValue(path: node.path, reason: "list at least one resolution") }
        return source.resolutions.filter(chosen.contains)
    }

    private func resolution(_ node: ManifestNode) throws(ManifestError) -> Resolution {
        let pixels = try node.int(in: 1...10_000)
        guard Resolution.rapidAPIChoices.contains(pixels) else {
            throw .invalidValue(path: node.path, reason: "\(pixels) is not one of "
                                    + Resolution.rapidAPIChoices.map(String.init).joined(separator: ", "))
        }
        return .pixels(pixels)
    }
}
