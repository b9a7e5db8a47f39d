import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// The OpenAPI registry calls `.openapi()` on schemas; this adds it to zod once, process-wide.
extendZodWithOpenApi(z);
