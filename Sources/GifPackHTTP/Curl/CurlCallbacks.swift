import CCurl

/// `CURLOPT_WRITEFUNCTION`: hands a body chunk to the transfer whose unretained pointer is `userdata`.
/// Returning less than the chunk's size makes curl abort with `CURLE_WRITE_ERROR`.
func curlBodyCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// `CURLOPT_HEADERFUNCTION`: hands one header line (status line included) to the transfer.
func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
}
