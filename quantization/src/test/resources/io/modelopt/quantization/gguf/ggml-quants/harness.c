// Calls ggml-quants.c's quantize_<type> (what llama-quantize's ggml_quantize_chunk calls) on a float file.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <stdarg.h>
#include <math.h>
float ggml_table_f32_f16[1 << 16];
void ggml_abort(const char * file, int line, const char * fmt, ...) { fprintf(stderr, "abort %s:%d\n", file, line); exit(2); }
const char * ggml_type_name(int t) { return "t"; }
static int bs(int t) { return (t == 10 || t == 11 || t == 12 || t == 13 || t == 14) ? 256 : 32; }
static int ts(int t) { switch (t) { case 2: return 18; case 3: return 20; case 6: return 22; case 7: return 24; case 8: return 34;
  case 10: return 84; case 11: return 110; case 12: return 144; case 13: return 176; case 14: return 210; case 20: return 18; } return 0; }
size_t ggml_type_size(int t) { return ts(t); }
size_t ggml_row_size(int t, int64_t n) { return ts(t) * n / bs(t); }
static float h2f(uint16_t h) {
  uint32_t s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023; float v;
  if (e == 0) v = ldexpf((float)m, -24); else if (e == 31) v = m ? NAN : INFINITY; else v = ldexpf((float)(m | 1024), (int)e - 25);
  return s ? -v : v;
}
size_t quantize_q4_0(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q4_1(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q5_0(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q5_1(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q8_0(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q2_K(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q3_K(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q4_K(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q5_K(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_q6_K(const float*, void*, int64_t, int64_t, const float*);
size_t quantize_iq4_nl(const float*, void*, int64_t, int64_t, const float*);
int main(int argc, char ** argv) {
  // usage: harness type rows n_per_row in.f32 [imatrix.f32|-] out.bin
  for (int i = 0; i < 65536; i++) ggml_table_f32_f16[i] = h2f((uint16_t)i);
  int t = atoi(argv[1]); int64_t rows = atoll(argv[2]), n = atoll(argv[3]);
  float * x = malloc(rows * n * 4); FILE * f = fopen(argv[4], "rb"); fread(x, 4, rows * n, f); fclose(f);
  float * qw = NULL;
  if (strcmp(argv[5], "-")) { qw = malloc(n * 4); f = fopen(argv[5], "rb"); fread(qw, 4, n, f); fclose(f); }
  size_t sz = ggml_row_size(t, n) * rows; void * y = calloc(1, sz); size_t r = 0;
  switch (t) {
    case 2: r = quantize_q4_0(x, y, rows, n, qw); break; case 3: r = quantize_q4_1(x, y, rows, n, qw); break;
    case 6: r = quantize_q5_0(x, y, rows, n, qw); break; case 7: r = quantize_q5_1(x, y, rows, n, qw); break;
    case 8: r = quantize_q8_0(x, y, rows, n, qw); break; case 10: r = quantize_q2_K(x, y, rows, n, qw); break;
    case 11: r = quantize_q3_K(x, y, rows, n, qw); break; case 12: r = quantize_q4_K(x, y, rows, n, qw); break;
    case 13: r = quantize_q5_K(x, y, rows, n, qw); break; case 14: r = quantize_q6_K(x, y, rows, n, qw); break;
    case 20: r = quantize_iq4_nl(x, y, rows, n, qw); break;
  }
  if (r != sz) { fprintf(stderr, "size %zu != %zu\n", r, sz); return 3; }
  f = fopen(argv[6], "wb"); fwrite(y, 1, sz, f); fclose(f); return 0;
}
