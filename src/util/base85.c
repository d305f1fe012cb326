/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "base85.h"

static const char digits[86]
    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

void
ar_base85_encode (const uint8_t *in, size_t len, char *out)
{
  for (size_t i = 0; i < len; i += 4)
    {
      uint32_t group = 0;
      for (size_t k = 0; k < 4; k++)
        group = (group << 8) | (i + k < len ? in[i + k] : 0);
      for (int k = 4; k >= 0; k--)
        {
          out[k] = digits[group % 85];
          group /= 85;
        }
      out += 5;
    }
  *out = '\0';
}
