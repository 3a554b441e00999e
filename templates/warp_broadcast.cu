    /* Bits, not values, travel: the element arrives exactly as stored. */
    wg_bits b = valid ? wg_to_bits(in[i]) : (wg_bits)0;
${exchange}    if (valid) out[i] = wg_from_bits(b);
