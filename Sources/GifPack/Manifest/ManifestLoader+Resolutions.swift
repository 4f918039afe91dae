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
            guard resolutions.count == 1 else {
                throw .invalidValue(path: list.path, reason: "one resolution per build: several in one run are not supported "
                                        + "by this gifpack; build each resolution with its own manifest")
            }
            return resolutions
        case (_?, _?):
            throw .invalidValue(path: node.path, reason: "give resolution or resolutions, not both")
        }
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
