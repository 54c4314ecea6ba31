import java.io.ByteArrayOutputStream;
import org.xerial.snappy.SnappyOutputStream;

/* Writes, as a C header on stdout, a xerial-framed snappy stream of
 * 100000 bytes (plain[i] = (i % 97) + (i / 1000)) written by snappy-java's
 * SnappyOutputStream with its default 32 KiB blocks, in two writes with a
 * flush between them (so one block is short). */
public class GenXerial {
	public static void main(String[] a) throws Exception {
		int n = 100000;
		byte[] plain = new byte[n];
		for (int i = 0; i < n; i++)
			plain[i] = (byte) ((i % 97) + (i / 1000));
		ByteArrayOutputStream bo = new ByteArrayOutputStream();
		SnappyOutputStream so = new SnappyOutputStream(bo);
		so.write(plain, 0, 40000);
		so.flush();
		so.write(plain, 40000, n - 40000);
		so.close();
		byte[] c = bo.toByteArray();
		StringBuilder sb = new StringBuilder();
		sb.append("static const unsigned char xerial_java[" + c.length + "] = {\n");
		for (int i = 0; i < c.length; i++) {
			sb.append(String.format("0x%02x,", c[i] & 0xff));
			sb.append(i % 16 == 15 ? "\n" : " ");
		}
		sb.append("\n};\n");
		System.out.print(sb);
	}
}
