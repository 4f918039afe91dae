extension FixtureConfiguration {
    /// Rejects values the server cannot honour, naming the field and the accepted range.
    func validate() throws(FixtureError) {
        func require(_ condition: Bool, _ field: String, _ reason: String) throws(FixtureError) {
            if !condition { throw .invalidConfiguration(field: field, reason: reason) }
        }
        if realDataDirectory == nil {
            try require((1...1_000_000).contains(exerciseCount), "exerciseCount", "must be 1...1000000, got \(exerciseCount)")
        }
        try require((1...1024).contains(gifDimension), "gifDimension", "must be 1...1024, got \(gifDimension)")
        try require(framesRange.lowerBound >= 1 && framesRange.upperBound <= 1000,
                    "framesRange", "must lie within 1...1000, got \(framesRange)")
        try require(colorsRange.lowerBound >= 2 && colorsRange.upperBound <= 256,
                    "colorsRange", "must lie within 2...256, got \(colorsRange)")
        if let typicalColors {
            try require((2...256).contains(typicalColors), "typicalColors", "must be 2...256, got \(typicalColors)")
        }
        if let distinctGIFs { try require(distinctGIFs >= 1, "distinctGIFs", "must be at least 1, got \(distinctGIFs)") }
        try require(duplicateEvery >= 0, "duplicateEvery", "must be 0 (never) or more, got \(duplicateEvery)")
        try require(latencyMilliseconds >= 0, "latencyMilliseconds", "must not be negative, got \(latencyMilliseconds)")
        try require(maxPageSize >= 1, "maxPageSize", "must be at least 1, got \(maxPageSize)")
        try require(FixtureCatalog.resolutions.contains(planMaxResolution), "planMaxResolution",
                    "must be one of \(FixtureCatalog.resolutions), got \(planMaxResolution)")
        try require((quota ?? 0) >= 0, "quota", "must not be negative, got \(quota ?? 0)")
        try require((0...65535).contains(port), "port", "must be 0...65535, got \(port)")
    }
}
