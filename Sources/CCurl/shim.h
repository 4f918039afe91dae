#ifndef GIFPACK_CCURL_SHIM_H
#define GIFPACK_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic macros/functions that
   Swift cannot call directly: these typed wrappers pin each argument kind. */
typedef size_t (*gp_curl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);

static inline CURLcode gp_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_setopt_data_cb(CURL *h, CURLoption o, gp_curl_data_cb v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode gp_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode gp_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode gp_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode gp_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/* CURLMsg carries a union; these read it without Swift having to model the union. */
static inline CURL *gp_msg_easy(CURLMsg *m) { return m->easy_handle; }
static inline int gp_msg_is_done(CURLMsg *m) { return m->msg == CURLMSG_DONE; }
static inline CURLcode gp_msg_result(CURLMsg *m) { return m->data.result; }
#endif
