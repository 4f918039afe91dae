#ifndef GIFPACK_CWEBP_SHIM_H
#define GIFPACK_CWEBP_SHIM_H
// libwebp (Debian's libwebp-dev): the encoder and its picture, the animation encoder and the mux
// (WebPAnimEncoder, WebPMux), the animation decoder (WebPAnimDecoder).
#include <webp/encode.h>
#include <webp/decode.h>
#include <webp/mux.h>
#include <webp/demux.h>
#endif
